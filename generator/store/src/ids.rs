//! The service's validated ids: [`WorkflowId`] (the CID of a manifest),
//! [`BuildId`] (the CID of a build's key, [`braid::build::build_key`]),
//! [`ContentId`] (the CID of an artifact's bytes), [`JobId`] and
//! [`OperationName`]. Each is checked once where it enters (a path segment,
//! a row of the store, JSON), so handlers, the store and the file system
//! never see a malformed one: `../`, encoded traversal and junk stop here.
//! As path parameters (braid-service's routes) they answer a malformed id with a
//! 400 problem before any handler code runs; read from a row
//! ([`crate::Store`]), a malformed one is a damaged database.

use std::fmt;

/// An id that is not well formed; the message says what one looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct IdError(&'static str);

/// Whether `s` is a CIDv1 as Braid names content: raw codec, blake3,
/// base32 lower case (`bafkr4i` + 53 more characters, 59 in all).
fn is_cid(s: &str) -> bool {
    s.len() == 59 && s.starts_with("bafkr4i") && s.bytes().all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b))
}

fn is_job_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A crate name, as operations have: a letter, then letters, digits, `_`
/// or `-`, 64 characters at most.
fn is_operation_name(s: &str) -> bool {
    s.len() <= 64
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Defines an id type: a `String` checked by `$check`, refused with `$what`.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $check:path, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, utoipa::ToSchema)]
        #[serde(transparent)]
        #[schema(value_type = String)]
        pub struct $name(String);

        impl $name {
            /// What a well-formed one looks like (the 400's detail).
            pub const EXPECTED: &'static str = $what;

            pub fn parse(s: &str) -> Result<Self, IdError> {
                if $check(s) { Ok(Self(s.to_string())) } else { Err(IdError(Self::EXPECTED)) }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                Self::parse(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// A workflow id: the CIDv1 of the manifest's canonical JSON (what
    /// `/v1/validate` and `braid build`'s report call `id`). One workflow
    /// may have several builds (other targets, another toolchain).
    WorkflowId,
    is_cid,
    "a workflow id is the CIDv1 of its manifest (bafkr4i..., 59 characters), as /v1/validate and POST /v1/workflows return it"
);

id_type!(
    /// A build id: the CIDv1 of the build's key (manifest, targets,
    /// operations, toolchain; [`braid::build::build_key`]). Identical
    /// submissions have the same build id, and share one build.
    BuildId,
    is_cid,
    "a build id is a CIDv1 (bafkr4i..., 59 characters), as POST /v1/workflows returns it"
);

id_type!(
    /// An artifact's id: the CIDv1 (raw, blake3, base32) of its bytes.
    ContentId,
    is_cid,
    "an artifact id is a CIDv1 (bafkr4i..., 59 characters)"
);

id_type!(
    /// A build job: 32 lowercase hex digits.
    JobId,
    is_job_id,
    "a job id is 32 lowercase hex digits, as POST /v1/workflows returns it"
);

id_type!(
    /// An operation's name, as the registry has it (a crate name).
    OperationName,
    is_operation_name,
    "an operation name is a letter followed by letters, digits, `_` or `-` (64 characters at most); GET /v1/operations lists them"
);

impl WorkflowId {
    /// The id of a checked workflow.
    pub fn of(workflow: &braid::manifest::Workflow) -> Result<Self, IdError> {
        Self::parse(&workflow.id)
    }
}

impl ContentId {
    /// The CID of `bytes`, computed with Braid's own operations.
    pub fn of(bytes: &[u8]) -> Self {
        let cid = braid::content_id(bytes);
        debug_assert!(is_cid(&cid), "{cid}");
        Self(cid)
    }
}

impl JobId {
    /// A new, random job id.
    pub fn new_random() -> Self {
        Self(uuid::Uuid::new_v4().simple().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_ids_are_refused_saying_what_is_expected() {
        let cid = ContentId::of(b"hello");
        assert!(ContentId::parse(cid.as_str()).is_ok());
        assert!(BuildId::parse(cid.as_str()).is_ok() && WorkflowId::parse(cid.as_str()).is_ok());
        for bad in ["../etc/passwd", "..", "%2e%2e", "bafkr4i", &cid.as_str().to_uppercase(), "", &format!("{cid}/x")] {
            let e = ContentId::parse(bad).unwrap_err();
            assert!(e.to_string().contains("CIDv1"), "{bad}: {e}");
            assert!(WorkflowId::parse(bad).is_err() && BuildId::parse(bad).is_err(), "{bad}");
        }
        let job = JobId::new_random();
        assert_eq!(JobId::parse(job.as_str()), Ok(job.clone()));
        for bad in ["not-a-job", "0123456789ABCDEF0123456789abcdef", "0123456789abcdef0123456789abcde", "../../x"] {
            assert!(JobId::parse(bad).unwrap_err().to_string().contains("32 lowercase hex"), "{bad}");
        }
        for good in ["op_cid", "op-x2", "a"] {
            assert!(OperationName::parse(good).is_ok(), "{good}");
        }
        for bad in ["", "1op", "../op_cid", "op cid", "op/cid", &"a".repeat(65)] {
            assert!(OperationName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_read_from_json_are_checked_too() {
        assert!(serde_json::from_str::<JobId>("\"../x\"").is_err());
        let job = JobId::new_random();
        let json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<JobId>(&json).unwrap(), job);
    }
}
