//! The codec for state that leaves a process (suspended workflows, cached
//! values): bincode 2 with its standard config and a size limit. This is
//! the only module that names bincode, so it can be swapped (bincode is
//! unmaintained, RUSTSEC-2025-0141) without touching anything else.

use alloc::string::String;
use alloc::vec::Vec;

use crate::text::text;
use crate::{Cid, Config, Error, Multihash};

/// Traits and derives for types the codec handles. Generated code derives
/// them with `#[bincode(crate = "::braid_support::codec::bincode")]`.
pub use bincode::{Decode, Encode};

#[doc(hidden)]
pub use bincode;

/// Largest value the codec decodes (64 MiB): a corrupt or hostile length
/// prefix cannot make it allocate more.
pub const MAX_DECODED_BYTES: usize = 64 << 20;

type Cfg = bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_DECODED_BYTES>,
>;

const CONFIG: Cfg = bincode::config::standard().with_limit::<MAX_DECODED_BYTES>();

/// The longest encoding [`encode`] gives: [`decode`] counts every byte
/// string's length plus 8 bytes for its length prefix against
/// [`MAX_DECODED_BYTES`], so a longer encoding could not be read back.
/// (Lists of values can count more; `Workflow.resume` in Wasm is checked by
/// decoding.)
pub const MAX_ENCODED_BYTES: usize = MAX_DECODED_BYTES - 16;

/// Encodes `value`; refuses an encoding over [`MAX_ENCODED_BYTES`].
pub fn encode<T: Encode>(value: &T) -> Result<Vec<u8>, Error> {
    let bytes = bincode::encode_to_vec(value, CONFIG).map_err(|e| Error::Codec(text!("encode: ", encode_error(&e))))?;
    if bytes.len() > MAX_ENCODED_BYTES {
        let len = bytes.len();
        return Err(Error::Codec(text!(
            "encode: the encoding takes ",
            len,
            " bytes, more than the 64 MiB that decode accepts"
        )));
    }
    Ok(bytes)
}
const _: () = assert!(MAX_DECODED_BYTES == 64 << 20, "the message above shows the limit");

/// Decodes a `T` from all of `bytes`; trailing bytes are an error.
pub fn decode<T: Decode<()>>(bytes: &[u8]) -> Result<T, Error> {
    let (value, used) =
        bincode::decode_from_slice(bytes, CONFIG).map_err(|e| Error::Codec(text!("decode: ", decode_error(&e))))?;
    if used != bytes.len() {
        return Err(Error::Codec(text!("decode: ", bytes.len() - used, " trailing bytes after the value")));
    }
    Ok(value)
}

// bincode's errors display through their `Debug` impls, which would link
// core's Debug machinery (about 15 KB of Wasm) into every workflow that can
// suspend; these say the same in words.

fn encode_error(e: &bincode::error::EncodeError) -> String {
    use bincode::error::EncodeError as E;
    match e {
        E::UnexpectedEnd => "the buffer is full".into(),
        E::Other(reason) => (*reason).into(),
        E::OtherString(reason) => reason.clone(),
        _ => "a value cannot be encoded".into(),
    }
}

fn decode_error(e: &bincode::error::DecodeError) -> String {
    use bincode::error::DecodeError as D;
    match e {
        D::UnexpectedEnd { additional } => text!("the data ends ", additional, " byte(s) too early"),
        D::LimitExceeded => text!("a length exceeds the limit of ", MAX_DECODED_BYTES >> 20, " MiB"),
        D::UnexpectedVariant { type_name, found, .. } => text!(type_name, " has no variant ", found),
        D::Utf8 { .. } => "a string is not UTF-8".into(),
        D::InvalidBooleanValue(found) => text!(found, " is not a boolean"),
        D::ArrayLengthMismatch { required, found } => text!("an array has ", found, " items, not ", required),
        D::OutsideUsizeRange(found) => text!(found, " does not fit in usize"),
        D::Other(reason) => (*reason).into(),
        D::OtherString(reason) => reason.clone(),
        _ => "malformed data".into(),
    }
}

impl Encode for Multihash {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), bincode::error::EncodeError> {
        self.as_bytes().encode(e)
    }
}

impl<C> Decode<C> for Multihash {
    fn decode<D: bincode::de::Decoder<Context = C>>(d: &mut D) -> Result<Self, bincode::error::DecodeError> {
        let bytes: Vec<u8> = Decode::decode(d)?;
        Multihash::from_bytes(&bytes).map_err(|e| bincode::error::DecodeError::OtherString(e.message()))
    }
}
bincode::impl_borrow_decode!(Multihash);

impl Encode for Cid {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), bincode::error::EncodeError> {
        self.as_str().encode(e)
    }
}

impl<C> Decode<C> for Cid {
    fn decode<D: bincode::de::Decoder<Context = C>>(d: &mut D) -> Result<Self, bincode::error::DecodeError> {
        let text: String = Decode::decode(d)?;
        Cid::from_text(text).map_err(|e| bincode::error::DecodeError::OtherString(e.message()))
    }
}
bincode::impl_borrow_decode!(Cid);

impl Encode for Config {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), bincode::error::EncodeError> {
        let pairs: Vec<(&str, &str)> = self.iter().collect();
        pairs.encode(e)
    }
}

impl<C> Decode<C> for Config {
    fn decode<D: bincode::de::Decoder<Context = C>>(d: &mut D) -> Result<Self, bincode::error::DecodeError> {
        let pairs: Vec<(String, String)> = Decode::decode(d)?;
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Ok(Config::from_checked(&pairs))
    }
}
bincode::impl_borrow_decode!(Config);

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn values_round_trip() {
        let mh = Multihash::wrap(0x1e, &[7; 32]).unwrap();
        assert_eq!(decode::<Multihash>(&encode(&mh).unwrap()).unwrap(), mh);
        let cid = Cid::from_text("bafkqaaa".into()).unwrap();
        assert_eq!(decode::<Cid>(&encode(&cid).unwrap()).unwrap(), cid);
        let config = Config::from_static(&[("a", "1"), ("b", "2")]);
        assert_eq!(decode::<Config>(&encode(&config).unwrap()).unwrap(), config);
        let v: Vec<Vec<u8>> = vec![vec![1, 2], vec![]];
        assert_eq!(decode::<Vec<Vec<u8>>>(&encode(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        // A multihash whose length prefix lies.
        let bytes = encode(&vec![0x12u8, 0x20, 1]).unwrap();
        let err = decode::<Multihash>(&bytes).unwrap_err();
        assert!(err.to_string().contains("says 32 bytes"), "{err}");
        // Trailing garbage.
        let mut bytes = encode(&5u64).unwrap();
        bytes.push(0);
        assert!(decode::<u64>(&bytes).unwrap_err().to_string().contains("trailing"));
        // A length prefix far over the limit.
        let err = decode::<Vec<u8>>(&[0xfc, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert!(err.to_string().starts_with("codec: decode"), "{err}");
    }

    #[test]
    fn what_encode_gives_decode_reads_back() {
        // A suspended state's shape: (workflow id, encoded body). The
        // largest pair encode gives (exactly MAX_ENCODED_BYTES) decodes.
        let id = String::from("bafkr4iexample");
        let body = vec![7u8; MAX_ENCODED_BYTES - 6 - id.len()];
        let bytes = encode(&(id.clone(), body.clone())).unwrap();
        assert_eq!(bytes.len(), MAX_ENCODED_BYTES);
        assert_eq!(decode::<(String, Vec<u8>)>(&bytes).unwrap().1.len(), body.len());
        // One byte more is refused, saying why.
        let err = encode(&(id, vec![7u8; body.len() + 1])).unwrap_err().to_string();
        assert!(
            err.contains(&format!("takes {} bytes, more than the 64 MiB that decode accepts", MAX_ENCODED_BYTES + 1)),
            "{err}"
        );
    }
}
