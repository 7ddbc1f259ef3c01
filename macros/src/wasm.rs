//! The standalone Wasm interface of an operation (the crate's `wasm`
//! feature): `execute` (a `Promise`), `executeSync` and `manifest`, with
//! hand-written TypeScript declarations so that inputs, config keys and
//! values and the output are typed exactly (no `any`).

use braid_schema::{OperationManifest, TypeName};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use braid_macro_support::{args::Args, crate_info::CrateInfo, signature::Signature};

pub fn interface(info: &CrateInfo, args: &Args, sig: &Signature, manifest: &OperationManifest) -> TokenStream {
    if !info.features.iter().any(|f| f == "wasm") {
        return quote!();
    }
    let ts = typescript(args, sig, manifest);
    let bindgen = quote!(::braid_support::wasm::wasm_bindgen::prelude::wasm_bindgen);
    let paths = quote!(
        wasm_bindgen = ::braid_support::wasm::wasm_bindgen,
        js_sys = ::braid_support::wasm::js_sys,
        wasm_bindgen_futures = ::braid_support::wasm::wasm_bindgen_futures
    );
    let any = quote!(::braid_support::wasm::AnyValue);
    let own = braid_schema::lib_name(&info.name);
    let rust_ty =
        |t: &TypeName| -> TokenStream { crate::local_type::local_type(t, &own, "::braid_support::wasm::AnyValue") };

    let idents: Vec<syn::Ident> = sig.inputs.iter().enumerate().map(|(i, _)| format_ident!("input{}", i)).collect();
    // How `prepare`'s tuple becomes the arguments of `execute`: flow control
    // borrows each collected value; fixed inputs are borrowed in place.
    let (prepare_ret, prepare_body, setup, turbofish, call_args) = if sig.flow_control {
        let anys = sig.type_params.iter().map(|_| any.clone());
        let place = format!("{} inputs", info.name);
        (
            quote!((::braid_support::__private::Vec<#any>, ::braid_support::Config)),
            quote! {
                let inputs = <::braid_support::__private::Vec<#any> as ::braid_support::wasm::FromJs>::from_js(
                    input0, ::braid_support::wasm::Place::Named(#place))?;
                ::core::result::Result::Ok((inputs, config))
            },
            quote!(let refs: ::braid_support::__private::Vec<&#any> = inputs.0.iter().collect();),
            quote!(::<#(#anys),*>),
            quote!(&refs, &inputs.1),
        )
    } else {
        let tys: Vec<TokenStream> = sig.inputs.iter().map(|i| rust_ty(&i.name)).collect();
        let places = (0..idents.len()).map(|i| format!("{} input {i}", info.name));
        let fields = (0..=idents.len()).map(syn::Index::from);
        (
            quote!((#(#tys,)* ::braid_support::Config)),
            quote! {
                ::core::result::Result::Ok((
                    #(<#tys as ::braid_support::wasm::FromJs>::from_js(#idents, ::braid_support::wasm::Place::Named(#places))?,)*
                    config,
                ))
            },
            quote!(),
            quote!(),
            quote!(#(&inputs.#fields),*),
        )
    };
    let to_js_error = quote!(::braid_support::wasm::to_js_error);
    let async_call = quote! {
        #setup
        let output = super::execute #turbofish (#call_args).await.map_err(#to_js_error)?;
    };
    let sync_call = quote! {
        #setup
        let output = super::execute_sync #turbofish (#call_args).map_err(#to_js_error)?;
    };

    quote! {
        #[cfg(feature = "wasm")]
        #[doc(hidden)]
        pub mod __braid_wasm {
            use ::braid_support::wasm::wasm_bindgen::{JsError, JsValue};
            // `typescript_custom_section` ignores the `wasm_bindgen = path`
            // option and names `wasm_bindgen` relative to this module.
            use ::braid_support::wasm::wasm_bindgen;

            #[#bindgen(typescript_custom_section, #paths)]
            const TYPESCRIPT: &'static str = #ts;

            fn prepare(#(#idents: &JsValue,)* config: &JsValue) -> ::core::result::Result<#prepare_ret, ::braid_support::Error> {
                let config = ::braid_support::wasm::config_from_js(super::OPERATION.name, super::OPERATION.config, config)?;
                #prepare_body
            }

            #[#bindgen(js_name = "execute", skip_typescript, #paths)]
            pub async fn execute(#(#idents: JsValue,)* config: JsValue) -> ::core::result::Result<JsValue, JsError> {
                let inputs = prepare(#(&#idents,)* &config).map_err(::braid_support::wasm::to_js_error)?;
                #async_call
                ::braid_support::wasm::IntoJs::into_js(output).map_err(#to_js_error)
            }

            #[#bindgen(js_name = "executeSync", skip_typescript, #paths)]
            pub fn execute_sync(#(#idents: JsValue,)* config: JsValue) -> ::core::result::Result<JsValue, JsError> {
                let inputs = prepare(#(&#idents,)* &config).map_err(::braid_support::wasm::to_js_error)?;
                #sync_call
                ::braid_support::wasm::IntoJs::into_js(output).map_err(#to_js_error)
            }

            #[#bindgen(js_name = "manifest", skip_typescript, #paths)]
            pub fn manifest() -> ::braid_support::__private::String {
                super::OPERATION.manifest_json.into()
            }
        }
    }
}

/// TypeScript type of a value, keeping type parameters by name.
fn ts(t: &TypeName) -> String {
    match t {
        TypeName::Param(name) => name.clone(),
        TypeName::Vec(inner) => format!("Array<{}>", ts(inner)),
        other => other.ts_type(),
    }
}

/// A TS string literal (JSON's escaping is valid TS).
fn ts_string(s: &str) -> String {
    Value::from(s).to_string()
}

/// The `.d.ts` text for the interface.
pub fn typescript(args: &Args, sig: &Signature, manifest: &OperationManifest) -> String {
    let description = manifest.description.replace("*/", "*\\/");
    let name = &manifest.name;
    let config = if args.config.is_empty() {
        "Record<string, never>".to_string()
    } else {
        let fields: Vec<String> = args
            .config
            .iter()
            .map(|c| {
                let values: Vec<String> = c.allowed.iter().map(|v| ts_string(&v.value())).collect();
                format!("  /** Default: {}. */\n  {}?: {};", values[0], c.key, values.join(" | "))
            })
            .collect();
        format!("{{\n{}\n}}", fields.join("\n"))
    };
    let generics = if sig.type_params.is_empty() {
        String::new()
    } else {
        format!("<{}>", sig.type_params.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "))
    };
    let params = if sig.flow_control {
        let t = ts(&sig.inputs[0].name);
        format!("{}: [{t}, ...{t}[]]", sig.inputs[0].ident)
    } else {
        sig.inputs.iter().map(|i| format!("{}: {}", i.ident, ts(&i.name))).collect::<Vec<_>>().join(", ")
    };
    let out = ts(&sig.output);
    // The crate's own value types; another crate's are declared by Braid
    // where the package is built.
    let types: String = manifest.types.iter().map(|(name, def)| format!("{}\n\n", def.ts_declaration(name))).collect();
    format!(
        "{types}/** Config of `{name}`: every key is optional and takes the default shown. */\n\
         export type Config = {config};\n\n\
         /**\n * {description}\n * Rejects with an `Error` saying what was expected when an input or the config is wrong.\n */\n\
         export function execute{generics}({params}, config?: Config): Promise<{out}>;\n\n\
         /** `execute`, synchronously: throws an `Error` instead of rejecting. */\n\
         export function executeSync{generics}({params}, config?: Config): {out};\n\n\
         /** The operation manifest, as canonical JSON text. */\n\
         export function manifest(): string;\n"
    )
}
