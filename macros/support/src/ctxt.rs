//! The error collector (as serde_derive's `Ctxt`): every check records its
//! errors here, each on its own tokens, and expansion goes on, so that one
//! compile shows every problem; [`Ctxt::check`] combines them at the end.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;

/// Errors found so far. Must be finished with [`Ctxt::check`].
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Self { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records `message` on the tokens at `span`.
    pub fn error(&self, span: Span, message: impl Display) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records an error syn produced (it may hold several).
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("Ctxt::check was called already").push(error);
    }

    /// How many errors were recorded, to tell whether a step added any.
    pub fn count(&self) -> usize {
        self.errors.borrow().as_ref().map_or(0, Vec::len)
    }

    /// Every error recorded, combined into one, or `Ok` if there is none.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt::check was called already");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Default for Ctxt {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to call Ctxt::check");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_every_error_in_order() {
        let cx = Ctxt::new();
        assert!(Ctxt::new().check().is_ok());
        cx.error(Span::call_site(), "first");
        cx.syn_error(syn::Error::new(Span::call_site(), "second"));
        assert_eq!(cx.count(), 2);
        let all: Vec<String> = cx.check().unwrap_err().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(all, ["first", "second"]);
    }

    #[test]
    #[should_panic(expected = "forgot to call Ctxt::check")]
    fn must_be_checked() {
        let cx = Ctxt::new();
        cx.error(Span::call_site(), "lost");
    }
}
