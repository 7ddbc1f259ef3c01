//! Compile-fail tests: each misuse of `#[operation]` is an error on the
//! offending tokens, with the message in `ui/*.stderr`. Refresh the expected
//! output with `TRYBUILD=overwrite cargo test -p braid-macros --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
