//! Code generation for `#[derive(Value)]`: from the checked
//! [`ValueDef`], `braid_support::Value` (name and TypeScript declaration),
//! bincode's `Encode`, `Decode` and `BorrowDecode` through the support
//! crate's codec (so suspended workflows holding the value resume), and,
//! wherever `braid-support`'s `wasm` feature is on, `FromJs` and `IntoJs`:
//! a record is a plain object keyed by its fields in lowerCamelCase, a
//! choice a string.

use braid_macro_support::crate_info::CrateInfo;
use braid_macro_support::value::{Shape, ValueDef};
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

pub fn derive(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let info = CrateInfo::load().map_err(|e| syn::Error::new(input.ident.span(), e))?;
    let def = ValueDef::parse(&input, &braid_schema::lib_name(&info.name))?;
    let ident = &def.name;
    let name = ident.to_string();
    let typescript = def.ts_declaration();
    let codec = quote!(::braid_support::codec);
    let bincode = quote!(::braid_support::codec::bincode);
    let result = quote!(::core::result::Result);

    let (encode, decode) = match &def.shape {
        Shape::Record(fields) => {
            let idents: Vec<&syn::Ident> = fields.iter().map(|f| &f.ident).collect();
            (
                quote!(#(#codec::Encode::encode(&self.#idents, encoder)?;)*),
                quote!(#result::Ok(Self { #(#idents: #codec::Decode::decode(decoder)?,)* })),
            )
        }
        Shape::Choice(variants) => {
            let idents: Vec<&syn::Ident> = variants.iter().map(|v| &v.ident).collect();
            let indices: Vec<u32> = (0..variants.len() as u32).collect();
            let max = variants.len() as u32 - 1;
            (
                quote! {
                    let index: u32 = match self { #(Self::#idents => #indices,)* };
                    #codec::Encode::encode(&index, encoder)?;
                },
                quote! {
                    match <u32 as #codec::Decode<__C>>::decode(decoder)? {
                        #(#indices => #result::Ok(Self::#idents),)*
                        found => #result::Err(#bincode::error::DecodeError::UnexpectedVariant {
                            type_name: #name,
                            allowed: &#bincode::error::AllowedEnumVariants::Range { min: 0, max: #max },
                            found,
                        }),
                    }
                },
            )
        }
    };

    let json = quote!(::braid_support::json);
    let write_json = match &def.shape {
        Shape::Record(fields) => {
            let idents: Vec<&syn::Ident> = fields.iter().map(|f| &f.ident).collect();
            let keys: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(i, f)| format!("{}\"{}\":", if i == 0 { "" } else { "," }, f.js_name))
                .collect();
            quote! {
                out.push('{');
                #(out.push_str(#keys); #json::Json::write_json(&self.#idents, out);)*
                out.push('}');
            }
        }
        Shape::Choice(variants) => {
            let idents: Vec<&syn::Ident> = variants.iter().map(|v| &v.ident).collect();
            let names: Vec<&str> = variants.iter().map(|v| v.js_name.as_str()).collect();
            quote!(#json::write_str(match self { #(Self::#idents => #names,)* }, out);)
        }
    };

    let positional = match &def.shape {
        Shape::Record(fields) => {
            let idents: Vec<&syn::Ident> = fields.iter().map(|f| &f.ident).collect();
            let types: Vec<&syn::Type> = fields.iter().map(|f| &f.rust).collect();
            quote! {
                impl ::braid_support::Record for #ident {
                    type Fields = (#(#types,)*);
                    fn into_fields(self) -> Self::Fields {
                        (#(self.#idents,)*)
                    }
                    fn from_fields((#(#idents,)*): Self::Fields) -> Self {
                        Self { #(#idents,)* }
                    }
                }
            }
        }
        Shape::Choice(variants) => {
            let idents: Vec<&syn::Ident> = variants.iter().map(|v| &v.ident).collect();
            let indices: Vec<u32> = (0..variants.len() as u32).collect();
            quote! {
                impl ::braid_support::Choice for #ident {
                    fn index(&self) -> u32 {
                        match self { #(Self::#idents => #indices,)* }
                    }
                    fn from_index(index: u32) -> ::core::option::Option<Self> {
                        match index { #(#indices => ::core::option::Option::Some(Self::#idents),)* _ => ::core::option::Option::None }
                    }
                }
            }
        }
    };

    let js = js(&def);
    Ok(quote! {
        #positional

        impl #json::Json for #ident {
            fn write_json(&self, out: &mut ::braid_support::__private::String) {
                #write_json
            }
        }

        impl ::braid_support::Value for #ident {
            const NAME: &'static str = #name;
            const TYPESCRIPT: &'static str = #typescript;
        }

        impl #codec::Encode for #ident {
            fn encode<__E: #bincode::enc::Encoder>(&self, encoder: &mut __E)
                -> #result<(), #bincode::error::EncodeError>
            {
                #encode
                #result::Ok(())
            }
        }

        impl<__C> #codec::Decode<__C> for #ident {
            fn decode<__D: #bincode::de::Decoder<Context = __C>>(decoder: &mut __D)
                -> #result<Self, #bincode::error::DecodeError>
            {
                #decode
            }
        }

        impl<'__de, __C> #bincode::BorrowDecode<'__de, __C> for #ident {
            fn borrow_decode<__D: #bincode::de::BorrowDecoder<'__de, Context = __C>>(decoder: &mut __D)
                -> #result<Self, #bincode::error::DecodeError>
            {
                <Self as #codec::Decode<__C>>::decode(decoder)
            }
        }

        #js
    })
}

/// `FromJs` and `IntoJs`.
fn js(def: &ValueDef) -> TokenStream {
    let ident = &def.name;
    let wasm = quote!(::braid_support::wasm);
    let value = quote!(#wasm::wasm_bindgen::JsValue);
    let result = quote!(::core::result::Result<Self, ::braid_support::Error>);
    let (expected, from_js, into_js) = match &def.shape {
        Shape::Record(fields) => {
            let idents: Vec<&syn::Ident> = fields.iter().map(|f| &f.ident).collect();
            let keys: Vec<&str> = fields.iter().map(|f| f.js_name.as_str()).collect();
            (
                format!("{ident} (an object {{ {} }})", keys.join(", ")),
                quote! {
                    #wasm::read_record(value, place, Self::EXPECTED)?;
                    ::core::result::Result::Ok(Self { #(#idents: #wasm::read_field(value, #keys, place)?,)* })
                },
                quote! {
                    let mut record = #wasm::RecordOut::new();
                    #(record.field(#keys, self.#idents)?;)*
                    ::core::result::Result::Ok(record.finish())
                },
            )
        }
        Shape::Choice(variants) => {
            let idents: Vec<&syn::Ident> = variants.iter().map(|v| &v.ident).collect();
            let names: Vec<&str> = variants.iter().map(|v| v.js_name.as_str()).collect();
            let indices = 0..variants.len();
            let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
            (
                quoted.join(" | "),
                quote! {
                    match #wasm::read_choice(value, place, &[#(#names),*], Self::EXPECTED)? {
                        #(#indices => ::core::result::Result::Ok(Self::#idents),)*
                        _ => ::core::unreachable!("read_choice returns an index of the names"),
                    }
                },
                quote! {
                    let name = match self { #(Self::#idents => #names,)* };
                    ::core::result::Result::Ok(#value::from_str(name))
                },
            )
        }
    };
    quote! { ::braid_support::__with_wasm! {
        impl #wasm::FromJs for #ident {
            const EXPECTED: &'static str = #expected;
            fn from_js(value: &#value, place: #wasm::Place<'_>) -> #result {
                #from_js
            }
        }

        impl #wasm::IntoJs for #ident {
            fn into_js(self) -> ::core::result::Result<#value, ::braid_support::Error> {
                #into_js
            }
        }
    }}
}
