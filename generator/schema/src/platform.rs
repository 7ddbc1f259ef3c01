//! Where an operation runs: the values of a manifest's `targets`
//! (`native`, `nostd`, `wasm`), typed, with the same strings in JSON.

use core::fmt;
use core::str::FromStr;

/// A platform an operation can be built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// With `std`, on the build machine's kind of target.
    Native,
    /// `no_std` + `alloc` (e.g. `thumbv7em-none-eabihf`).
    Nostd,
    /// `wasm32-unknown-unknown` through wasm-bindgen (the crate's `wasm` feature).
    Wasm,
}

impl Platform {
    /// Every platform, in manifest order.
    pub const ALL: [Platform; 3] = [Platform::Native, Platform::Nostd, Platform::Wasm];

    /// The name in manifests: `native`, `nostd` or `wasm`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Platform::Native => "native",
            Platform::Nostd => "nostd",
            Platform::Wasm => "wasm",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A target name that is not a [`Platform`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{found}`; expected native, nostd or wasm")]
pub struct ParsePlatformError {
    /// The text that did not parse (shortened).
    pub found: alloc::string::String,
}

impl FromStr for Platform {
    type Err = ParsePlatformError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| ParsePlatformError { found: crate::text::truncate(text, 32) })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Platform {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Platform {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Platform;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("one of \"native\", \"nostd\", \"wasm\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Platform, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn names_round_trip() {
        for p in Platform::ALL {
            assert_eq!(p.as_str().parse::<Platform>().unwrap(), p);
            assert_eq!(p.to_string(), p.as_str());
        }
        let err = "riscv".parse::<Platform>().unwrap_err();
        assert_eq!(err.to_string(), "unknown target `riscv`; expected native, nostd or wasm");
        assert!("Native".parse::<Platform>().is_err());
    }

    #[cfg(feature = "json")]
    #[test]
    fn json_form_is_the_name() {
        assert_eq!(serde_json::to_string(&Platform::ALL).unwrap(), r#"["native","nostd","wasm"]"#);
        let p: Platform = serde_json::from_str("\"nostd\"").unwrap();
        assert_eq!(p, Platform::Nostd);
        let err = serde_json::from_str::<Platform>("\"riscv\"").unwrap_err();
        assert!(err.to_string().contains("unknown target `riscv`"), "{err}");
    }
}
