//! Parsing of the attribute's arguments:
//! `#[operation(description = "...", groups = ["SYS"], config(key = ["a", "b"]))]`.

use proc_macro2::TokenStream;
use syn::{spanned::Spanned, Expr, ExprArray, Lit, LitStr};

/// The attribute's arguments, checked.
#[derive(Debug, Default)]
pub struct Args {
    /// Overrides the package description.
    pub description: Option<LitStr>,
    /// Groups such as `SYS`; `FLOWCONTROL` is added for variadic operations.
    pub groups: Vec<LitStr>,
    /// Config keys in declaration order, each with its allowed values
    /// (default first).
    pub config: Vec<ConfigDecl>,
}

/// One `key = ["value", ...]` of `config(...)`.
#[derive(Debug)]
pub struct ConfigDecl {
    pub key: syn::Ident,
    pub allowed: Vec<LitStr>,
}

const KEYS: &str = "`description`, `groups`, `config`";

pub fn parse(tokens: TokenStream) -> syn::Result<Args> {
    let mut args = Args::default();
    let mut seen: Vec<String> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let Some(ident) = meta.path.get_ident().cloned() else {
            return Err(meta.error(format!("expected one of {KEYS}")));
        };
        let name = ident.to_string();
        if seen.contains(&name) {
            return Err(syn::Error::new(ident.span(), format!("`{name}` is given twice")));
        }
        seen.push(name.clone());
        match name.as_str() {
            "description" => {
                let lit: LitStr = meta.value()?.parse()?;
                check_text(&lit, "a description")?;
                args.description = Some(lit);
            }
            "groups" => {
                let array: ExprArray = meta.value()?.parse()?;
                for lit in string_list(&array)? {
                    let v = lit.value();
                    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()) {
                        return Err(syn::Error::new(lit.span(), "groups are UPPER_CASE words such as \"SYS\""));
                    }
                    if v == "FLOWCONTROL" {
                        return Err(syn::Error::new(
                            lit.span(),
                            "`FLOWCONTROL` is added automatically when the operation takes `&[&T]`; remove it",
                        ));
                    }
                    if args.groups.iter().any(|g| g.value() == v) {
                        return Err(syn::Error::new(lit.span(), format!("group \"{v}\" is listed twice")));
                    }
                    args.groups.push(lit);
                }
            }
            "config" => {
                meta.parse_nested_meta(|entry| {
                    let Some(key) = entry.path.get_ident().cloned() else {
                        return Err(entry.error("config keys are identifiers such as `hasher`"));
                    };
                    if args.config.iter().any(|c| c.key == key) {
                        return Err(syn::Error::new(key.span(), format!("duplicate config key `{key}`")));
                    }
                    let array: ExprArray = entry.value()?.parse()?;
                    let allowed = string_list(&array)?;
                    if allowed.is_empty() {
                        return Err(syn::Error::new(
                            array.span(),
                            format!("config `{key}` needs at least one allowed value; the first is the default"),
                        ));
                    }
                    for (i, lit) in allowed.iter().enumerate() {
                        check_text(lit, "a config value")?;
                        if allowed[..i].iter().any(|prev| prev.value() == lit.value()) {
                            return Err(syn::Error::new(
                                lit.span(),
                                format!("config `{key}` lists \"{}\" twice", lit.value()),
                            ));
                        }
                    }
                    args.config.push(ConfigDecl { key, allowed });
                    Ok(())
                })?;
            }
            _ => return Err(syn::Error::new(ident.span(), format!("unknown key `{name}`; expected one of {KEYS}"))),
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, tokens)?;
    Ok(args)
}

fn string_list(array: &ExprArray) -> syn::Result<Vec<LitStr>> {
    array
        .elems
        .iter()
        .map(|e| match e {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Ok(s.clone()),
            other => Err(syn::Error::new(other.span(), "expected a string literal")),
        })
        .collect()
}

/// Strings that end up in manifests: non-empty, no control characters.
fn check_text(lit: &LitStr, what: &str) -> syn::Result<()> {
    let v = lit.value();
    if v.trim().is_empty() || v.chars().any(char::is_control) {
        return Err(syn::Error::new(lit.span(), format!("{what} must be non-empty text without control characters")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn err(tokens: TokenStream) -> String {
        parse(tokens).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_key() {
        let args =
            parse(quote!(description = "d", groups = ["SYS"], config(hasher = ["a", "b"], base = ["x"]))).unwrap();
        assert_eq!(args.description.unwrap().value(), "d");
        assert_eq!(args.groups.len(), 1);
        assert_eq!(args.config.len(), 2);
        assert_eq!(args.config[0].key, "hasher");
        assert_eq!(args.config[0].allowed[1].value(), "b");
        assert!(parse(quote!()).unwrap().config.is_empty());
    }

    #[test]
    fn rejects_misuse() {
        assert!(err(quote!(name = "x")).contains("unknown key `name`"));
        assert!(err(quote!(config(a = ["x"], a = ["y"]))).contains("duplicate config key `a`"));
        assert!(err(quote!(config(a = []))).contains("needs at least one allowed value"));
        assert!(err(quote!(config(a = ["x", "x"]))).contains("lists \"x\" twice"));
        assert!(err(quote!(config(a = [1]))).contains("expected a string literal"));
        assert!(err(quote!(groups = ["sys"])).contains("UPPER_CASE"));
        assert!(err(quote!(groups = ["FLOWCONTROL"])).contains("added automatically"));
        assert!(err(quote!(description = "a", description = "b")).contains("given twice"));
        assert!(err(quote!(description = "")).contains("non-empty"));
        assert!(err(quote!(config(a = ["x\ny"]))).contains("control characters"));
    }
}
