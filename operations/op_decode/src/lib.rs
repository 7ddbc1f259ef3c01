//! `op_decode`: `String -> Bytes`, the inverse of `op_encode`: `hex`
//! (default; lower or upper case), `base64` (standard alphabet, padded) and
//! `base64url` (URL-safe alphabet, unpadded), decoded by `data-encoding`.
//! Text that is not in the encoding is an error naming the first bad
//! position.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Bytes, Config, Error};

/// Decodes `input` from the configured encoding.
#[braid_macros::operation(groups = ["SYS"], config(encoding = ["hex", "base64", "base64url"]))]
pub async fn execute(input: &str, config: &Config) -> Result<Bytes, Error> {
    let (encoding, name) = match config.get("encoding").unwrap_or("hex") {
        "hex" => (&data_encoding::HEXLOWER_PERMISSIVE, "hex"),
        "base64" => (&data_encoding::BASE64, "base64 (padded)"),
        "base64url" => (&data_encoding::BASE64URL_NOPAD, "base64url (unpadded)"),
        other => return Err(OPERATION.config_error("encoding", other)),
    };
    encoding.decode(input.as_bytes()).map_err(|e| {
        let reason = match e.kind {
            data_encoding::DecodeKind::Length => {
                alloc::format!("{} characters is not a length {name} text can have", input.len())
            }
            _ => alloc::format!("not {name} text: {} at byte {}", e.kind, e.position),
        };
        Error::invalid_input(OPERATION.name, reason)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn dec(text: &str, encoding: &str) -> Result<Bytes, Error> {
        execute_sync(text, &config([("encoding", encoding)]).unwrap())
    }

    // RFC 4648 section 10 test vectors, read back.
    #[test]
    fn rfc4648_vectors() {
        let cases = [("", "", ""), ("f", "Zg==", "66"), ("fo", "Zm8=", "666f"), ("foobar", "Zm9vYmFy", "666f6f626172")];
        for (output, b64, hex) in cases {
            assert_eq!(dec(b64, "base64").unwrap(), output.as_bytes());
            assert_eq!(dec(hex, "hex").unwrap(), output.as_bytes());
            assert_eq!(dec(&hex.to_uppercase(), "hex").unwrap(), output.as_bytes());
        }
        assert_eq!(dec("-_8", "base64url").unwrap(), [0xfb, 0xff]);
        assert_eq!(dec("+/8=", "base64").unwrap(), [0xfb, 0xff]);
    }

    #[test]
    fn text_not_in_the_encoding_is_an_error_saying_where() {
        let e = dec("abc", "hex").unwrap_err().to_string();
        assert!(e.contains("op_decode") && e.contains("3 characters"), "{e}");
        let e = dec("0g", "hex").unwrap_err().to_string();
        assert!(e.contains("not hex text") && e.contains("at byte 1"), "{e}");
        let e = dec("-_8=", "base64").unwrap_err().to_string();
        assert!(e.contains("base64 (padded)") && e.contains("at byte 0"), "{e}");
        assert!(dec("Zg==", "base64url").is_err(), "padding is not base64url");
        assert!(config([("encoding", "base32")]).is_err(), "an undeclared encoding is refused before the call");
    }
}
