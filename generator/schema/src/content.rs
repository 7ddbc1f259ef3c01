//! Content ids: the CIDv1 (raw codec, blake3 multihash, base32 multibase)
//! of bytes. Operation version ids, workflow ids and artifact ids are all
//! content ids.

#[cfg(feature = "content-id")]
use alloc::string::String;

#[cfg(feature = "content-id")]
/// CIDv1 = 0x01, raw codec = 0x55, blake3 multihash code = 0x1e with a
/// 32-byte digest (each a one-byte varint).
const PREFIX: [u8; 4] = [0x01, 0x55, 0x1e, 0x20];

/// RFC 4648 base32, lower case, as multibase `b` uses it (no padding).
const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

#[cfg(feature = "content-id")]
/// The CIDv1 (raw, blake3, base32) of `bytes`, e.g.
/// `bafkr4ifpcne3t5pzugtkaqcn5i3nzskjtpfslsnnyejlpte2spfoihzsmi` for no bytes.
pub fn content_id(bytes: &[u8]) -> String {
    let digest = blake3::hash(bytes);
    let mut cid = [0u8; 36];
    cid[..4].copy_from_slice(&PREFIX);
    cid[4..].copy_from_slice(digest.as_bytes());
    let mut out = String::with_capacity(1 + (cid.len() * 8).div_ceil(5));
    out.push('b');
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in cid {
        buffer = ((buffer << 8) | u32::from(byte)) & 0xffff;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(BASE32[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(BASE32[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

/// Whether `text` has the form [`content_id`] gives: `b`, then the 58
/// base32 characters of a CIDv1 with a raw codec and a blake3 digest.
pub fn is_content_id(text: &str) -> bool {
    text.len() == 59 && text.starts_with("bafkr4i") && text.bytes().all(|b| BASE32.contains(&b))
}

#[cfg(all(test, feature = "content-id"))]
mod tests {
    use super::*;

    #[test]
    fn known_answers() {
        // From multiformats + @noble/hashes (operations/vectors/cid.json
        // has more; the compiler's tests compare with op_multihash + op_cid).
        assert_eq!(content_id(b""), "bafkr4ifpcne3t5pzugtkaqcn5i3nzskjtpfslsnnyejlpte2spfoihzsmi");
        assert_eq!(content_id(b"hello world"), "bafkr4igxjga67jykbseaxdmmdgc5a5o3zp3htom2l6mrjznk7fvyggu6eq");
        let bytes: alloc::vec::Vec<u8> = (0..16384u32).map(|i| ((i * 31 + 7) % 256) as u8).collect();
        assert_eq!(content_id(&bytes), "bafkr4iagrma2kdljfqjrdbto5u7v6p3kjn4m3xgw5b6lipnimo6myg4tvi");
        for id in [content_id(b""), content_id(&bytes)] {
            assert!(is_content_id(&id), "{id}");
        }
        for bad in [
            "",
            "bafkr4i",
            "Bafkr4ifpcne3t5pzugtkaqcn5i3nzskjtpfslsnnyejlpte2spfoihzsmi",
            "bafkr4ifpcne3t5pzugtkaqcn5i3nzskjtpfslsnnyejlpte2spfoihzsm1",
        ] {
            assert!(!is_content_id(bad), "{bad}");
        }
    }
}
