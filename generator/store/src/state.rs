//! The states of jobs and builds: how they are spelled in the database and
//! in the API (one place: [`JobState::as_str`], [`BuildState::as_str`]),
//! read back with a check, so a query never compares with a string of its
//! own.

use serde::Serialize;

/// Where a build job is: `queued` -> `running` -> `succeeded` or `failed`
/// (`running` -> `queued` again when the server stops or restarts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
}

/// Where a build is: `building` while a job works on it, then `succeeded`
/// or `failed`; `missing` once an artifact of it was found damaged or gone
/// (the next identical submission builds it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuildState {
    Building,
    Succeeded,
    Failed,
    Missing,
}

/// The spelling of each state, in the database and in JSON.
macro_rules! spelled {
    ($ty:ident { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                Self::parse(s).ok_or_else(|| format!("unknown {} {s:?}", stringify!($ty)))
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

spelled!(JobState { Queued = "queued", Running = "running", Succeeded = "succeeded", Failed = "failed" });
spelled!(BuildState { Building = "building", Succeeded = "succeeded", Failed = "failed", Missing = "missing" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_spelled_the_same_in_sql_and_json() {
        for s in JobState::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(JobState::parse(s.as_str()), Some(*s));
        }
        for s in BuildState::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(BuildState::parse(s.as_str()), Some(*s));
        }
    }
}
