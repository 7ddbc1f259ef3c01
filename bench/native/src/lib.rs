//! The hand-written chain the generated crate is measured against: blake3,
//! then a CIDv1 (raw, base32), in one function.

pub fn cid_by_hand(bytes: &[u8]) -> String {
    let digest = blake3::hash(bytes);
    let mh = multihash::Multihash::<64>::wrap(0x1e, digest.as_bytes()).expect("32 bytes fit");
    cid::Cid::new_v1(0x55, mh).to_string_of_base(cid::multibase::Base::Base32Lower).expect("base32 encodes")
}
