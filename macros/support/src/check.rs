//! The one path from an `#[operation]` fn to its manifest, shared by the
//! macro (`braid-macros`) and [`crate::derive_manifest`]: the attribute's
//! arguments, the signature, then the manifest the schema checks, every
//! problem recorded in one [`Ctxt`] in that order.

use braid_schema::OperationManifest;
use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::{
    args::{self, Args},
    crate_info::CrateInfo,
    ctxt::Ctxt,
    manifest,
    signature::{self, Signature},
};

/// What [`check`] read; each part is complete only if `cx` holds no error.
#[derive(Debug)]
pub struct Checked {
    pub args: Args,
    /// `None` when the signature had errors.
    pub sig: Option<Signature>,
    /// `None` when no [`CrateInfo`] was given.
    pub manifest: Option<OperationManifest>,
}

/// Reads and checks the attribute's arguments `attr` and the annotated
/// `func`, and builds the manifest with `info` (`None` when the crate could
/// not be read: the caller reports why, and no manifest is built).
pub fn check(cx: &Ctxt, attr: TokenStream, func: &ItemFn, info: Option<&CrateInfo>) -> Checked {
    let args = args::parse(cx, attr);
    let krate = info.map_or_else(String::new, |info| braid_schema::lib_name(&info.name));
    let sig = signature::parse(cx, func, &krate);
    let manifest = info.map(|info| manifest::build(cx, info, &args, sig.as_ref(), func.sig.ident.span()));
    Checked { args, sig, manifest }
}
