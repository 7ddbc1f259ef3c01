//! `op_encode`: `Bytes -> String`, text encodings of RFC 4648: lowercase
//! `hex` (default), `base64` (standard alphabet, padded) and `base64url`
//! (URL-safe alphabet, unpadded). Encoding is done by `data-encoding`.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use braid_support::{Config, Error};

/// Encodes `input` as text in the configured encoding.
#[braid_macros::operation(groups = ["SYS"], config(encoding = ["hex", "base64", "base64url"]))]
pub async fn execute(input: &[u8], config: &Config) -> Result<String, Error> {
    let encoding = match config.get("encoding").unwrap_or("hex") {
        "hex" => &data_encoding::HEXLOWER,
        "base64" => &data_encoding::BASE64,
        "base64url" => &data_encoding::BASE64URL_NOPAD,
        other => return Err(OPERATION.config_error("encoding", other)),
    };
    Ok(encoding.encode(input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn enc(data: &[u8], encoding: &str) -> String {
        execute_sync(&Vec::from(data), &config([("encoding", encoding)]).unwrap()).unwrap()
    }

    // RFC 4648 section 10 test vectors.
    #[test]
    fn rfc4648_vectors() {
        let cases = [("", "", ""), ("f", "Zg==", "66"), ("fo", "Zm8=", "666f"), ("foobar", "Zm9vYmFy", "666f6f626172")];
        for (input, b64, hex) in cases {
            assert_eq!(enc(input.as_bytes(), "base64"), b64);
            assert_eq!(enc(input.as_bytes(), "hex"), hex);
        }
        assert_eq!(enc(&[0xfb, 0xff], "base64url"), "-_8");
        assert_eq!(enc(&[0xfb, 0xff], "base64"), "+/8=");
    }
}
