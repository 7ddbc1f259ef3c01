//! What the unit tests share: `Type`s, which only a component gives.

use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Type};

/// The types of the parameters of `f` in a component written as text,
/// its records and enums imported by name as a workflow's are.
pub(crate) fn types(params: &str) -> Vec<Type> {
    let wat = format!(
        r#"(component
            (type $e0 (enum "a-b" "c"))
            (import "e" (type $e (eq $e0)))
            (type $r0 (record (field "file-cid" string) (field "data" (list u8)) (field "n" u64)
                (field "f" float64) (field "o" (option bool)) (field "e" $e)
                (field "m" (list (tuple string u8))) (field "l" (list $e))))
            (import "r" (type $r (eq $r0)))
            (import "f" (func {params})))"#
    );
    let engine = wasmtime::Engine::default();
    let component = Component::new(&engine, wat::parse_str(&wat).unwrap()).unwrap();
    let ty = component.component_type();
    let (_, item) = ty.imports(&engine).find(|(name, _)| *name == "f").unwrap();
    let ComponentItem::ComponentFunc(func) = item.ty else { panic!("f is not a function") };
    func.params().map(|(_, ty)| ty).collect()
}
