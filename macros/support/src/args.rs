//! Parsing of the attribute's arguments:
//! `#[operation(description = "...", groups = ["SYS"], config(key = ["a", "b"]))]`.
//! Only the attribute's own syntax is checked here (known keys, each once,
//! string literals, no `FLOWCONTROL`); what the values must be is the
//! schema's to say (`braid_schema::OperationManifest::problems`), reported
//! by `manifest.rs` on these literals.

use proc_macro2::TokenStream;
use syn::{spanned::Spanned, Expr, ExprArray, Lit, LitStr};

use crate::ctxt::Ctxt;

/// The attribute's arguments.
#[derive(Debug, Default)]
pub struct Args {
    /// Overrides the package description.
    pub description: Option<LitStr>,
    /// Groups such as `SYS`; `FLOWCONTROL` is added for variadic operations.
    pub groups: Vec<LitStr>,
    /// Config keys in declaration order, each with its allowed values
    /// (default first).
    pub config: Vec<ConfigDecl>,
    /// `stream = T`: the type implementing `braid_support::Incremental`,
    /// the operation's incremental form.
    pub stream: Option<syn::Type>,
}

/// One `key = ["value", ...]` of `config(...)`.
#[derive(Debug)]
pub struct ConfigDecl {
    pub key: syn::Ident,
    /// The span of the `[...]` list.
    pub list: proc_macro2::Span,
    pub allowed: Vec<LitStr>,
}

const KEYS: &str = "`description`, `groups`, `config`, `stream`";

/// Parses the arguments, recording every error in `cx`; what could not be
/// read is left out of the result.
pub fn parse(cx: &Ctxt, tokens: TokenStream) -> Args {
    let mut args = Args::default();
    let mut seen: Vec<String> = Vec::new();
    let mut keys: Vec<syn::Ident> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let Some(ident) = meta.path.get_ident().cloned() else {
            return Err(meta.error(format!("expected one of {KEYS}")));
        };
        let name = ident.to_string();
        if seen.contains(&name) {
            cx.error(ident.span(), format!("`{name}` is given twice"));
        }
        seen.push(name.clone());
        match name.as_str() {
            "description" => args.description = Some(meta.value()?.parse()?),
            "stream" => args.stream = Some(meta.value()?.parse()?),
            "groups" => {
                let array: ExprArray = meta.value()?.parse()?;
                for lit in string_list(cx, &array).unwrap_or_default() {
                    if lit.value() == braid_schema::FLOWCONTROL {
                        cx.error(
                            lit.span(),
                            "`FLOWCONTROL` is added automatically when the operation takes `&[&T]`; remove it",
                        );
                    } else {
                        args.groups.push(lit);
                    }
                }
            }
            "config" => meta.parse_nested_meta(|entry| {
                let Some(key) = entry.path.get_ident().cloned() else {
                    return Err(entry.error("config keys are identifiers such as `hasher`"));
                };
                let array: ExprArray = entry.value()?.parse()?;
                let duplicate = keys.contains(&key);
                if duplicate {
                    cx.error(key.span(), format!("duplicate config key `{key}`"));
                }
                keys.push(key.clone());
                if let (Some(allowed), false) = (string_list(cx, &array), duplicate) {
                    args.config.push(ConfigDecl { key, list: array.span(), allowed });
                }
                Ok(())
            })?,
            _ => {
                cx.error(ident.span(), format!("unknown key `{name}`; expected one of {KEYS}"));
                skip_value(&meta)?;
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, tokens) {
        cx.syn_error(e);
    }
    args
}

/// Skips `= expr` or `(...)` after an unknown key, so the keys after it are
/// still read.
fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// The string literals of `[...]`; `None` (after recording an error on each
/// other element) if any element is not one.
fn string_list(cx: &Ctxt, array: &ExprArray) -> Option<Vec<LitStr>> {
    let mut out = Vec::new();
    let mut ok = true;
    for e in &array.elems {
        match e {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => out.push(s.clone()),
            other => {
                cx.error(other.span(), "expected a string literal");
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn errors(tokens: TokenStream) -> Vec<String> {
        let cx = Ctxt::new();
        parse(&cx, tokens);
        cx.check().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    }

    #[test]
    fn parses_every_key() {
        let cx = Ctxt::new();
        let args = parse(
            &cx,
            quote!(description = "d", groups = ["SYS"], config(hasher = ["a", "b"], base = ["x"]), stream = Hasher),
        );
        cx.check().unwrap();
        assert_eq!(args.description.unwrap().value(), "d");
        assert!(args.stream.is_some());
        assert_eq!(args.groups.len(), 1);
        assert_eq!(args.config.len(), 2);
        assert_eq!(args.config[0].key, "hasher");
        assert_eq!(args.config[0].allowed[1].value(), "b");
        let cx = Ctxt::new();
        assert!(parse(&cx, quote!()).config.is_empty());
        cx.check().unwrap();
    }

    #[test]
    fn rejects_misuse() {
        assert_eq!(
            errors(quote!(name = "x")),
            ["unknown key `name`; expected one of `description`, `groups`, `config`, `stream`"]
        );
        assert_eq!(errors(quote!(config(a = ["x"], a = ["y"]))), ["duplicate config key `a`"]);
        assert_eq!(errors(quote!(config(a = [1]))), ["expected a string literal"]);
        assert_eq!(
            errors(quote!(groups = ["FLOWCONTROL"]))[0],
            "`FLOWCONTROL` is added automatically when the operation takes `&[&T]`; remove it"
        );
        assert_eq!(errors(quote!(description = "a", description = "b")), ["`description` is given twice"]);
    }

    #[test]
    fn reports_every_error_and_keeps_reading() {
        let found = errors(quote!(
            colour = "red",
            shape(round),
            config(a = [1, 2], a = ["x"]),
            groups = ["FLOWCONTROL"],
            config(b = ["y"])
        ));
        assert_eq!(
            found,
            [
                "unknown key `colour`; expected one of `description`, `groups`, `config`, `stream`",
                "unknown key `shape`; expected one of `description`, `groups`, `config`, `stream`",
                "expected a string literal",
                "expected a string literal",
                "duplicate config key `a`",
                "`FLOWCONTROL` is added automatically when the operation takes `&[&T]`; remove it",
                "`config` is given twice",
            ]
        );
    }
}
