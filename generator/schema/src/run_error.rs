//! `run-error`, how a workflow component's run fails, defined once: the
//! WIT world renders its kinds from [`RunErrorKind::ALL`], the generated
//! crate maps its errors to them, and every host (Braid's executor, its
//! service) reads them back as this type.

use core::fmt;

/// The WIT record a failed run gives: `{ kind: run-error-kind, message }`.
pub const RUN_ERROR: &str = "run-error";
/// The WIT enum of [`RunErrorKind`]s.
pub const RUN_ERROR_KIND: &str = "run-error-kind";

/// What kind of failure a run met, as a component's caller can tell cases
/// apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunErrorKind {
    /// An input (or its number or type) the workflow does not take.
    InvalidInput,
    /// A config key or value of an operation that is not allowed or not
    /// compiled in.
    Config,
    /// Anything else an operation refused.
    Failed,
}

impl RunErrorKind {
    /// Every kind, in the WIT enum's order.
    pub const ALL: [Self; 3] = [Self::InvalidInput, Self::Config, Self::Failed];

    /// Its case in the WIT enum (`invalid-input`).
    pub const fn wit(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid-input",
            Self::Config => "config",
            Self::Failed => "failed",
        }
    }

    /// Its Rust name, as wit-bindgen names the case (`InvalidInput`).
    pub const fn rust(self) -> &'static str {
        match self {
            Self::InvalidInput => "InvalidInput",
            Self::Config => "Config",
            Self::Failed => "Failed",
        }
    }

    /// What it means, as the WIT world documents the case.
    pub const fn doc(self) -> &'static str {
        match self {
            Self::InvalidInput => "An input the workflow does not take (its value or form).",
            Self::Config => "An operation's config that is not allowed or not compiled in.",
            Self::Failed => "Anything else an operation refused.",
        }
    }

    /// The kind whose WIT case is `name`.
    pub fn from_wit(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.wit() == name)
    }
}

impl fmt::Display for RunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_wit_case() {
        for kind in RunErrorKind::ALL {
            assert_eq!(RunErrorKind::from_wit(kind.wit()), Some(kind));
            assert_eq!(kind.wit().replace('-', ""), kind.rust().to_lowercase());
        }
        assert_eq!(RunErrorKind::from_wit("InvalidInput"), None);
    }
}
