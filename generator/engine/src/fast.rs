//! Typed calls: `run` for the common shapes (one `list<u8>` or `string`
//! input, a `list<u8>` or `string` output), and `run-packed` for every
//! other. wasmtime's dynamic API lifts and lowers a `list<u8>` one `Val`
//! (40 bytes) at a time; its typed API copies it as one block, which is
//! most of a run's cost on inputs of kilobytes, and keeps the host's copy
//! of an input or output the size of its bytes.

use wasmtime::component::{ComponentExportIndex, ComponentType, Instance, Lift, Type};
use wasmtime::Store;

use crate::io::{Input, Output};
use crate::values::is_bytes;
use crate::{RunError, RunErrorKind};

/// A shape of `run` called through the typed API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    BytesToString,
    BytesToBytes,
    StringToString,
    StringToBytes,
}

impl Shape {
    /// The shape of `run(params) -> result<output, run-error>`, if typed.
    pub(crate) fn of(params: &[(String, Type)], output: &Type) -> Option<Self> {
        let [(_, input)] = params else { return None };
        Some(match (is_bytes(input), *input == Type::String, is_bytes(output), *output == Type::String) {
            (true, _, _, true) => Self::BytesToString,
            (true, _, true, _) => Self::BytesToBytes,
            (_, true, _, true) => Self::StringToString,
            (_, true, true, _) => Self::StringToBytes,
            _ => return None,
        })
    }

    /// Calls `run` of `instance` on `input`: `None` when the input is not
    /// of the shape (bytes as [`Input::Bytes`], text as a string; the
    /// caller then takes the dynamic path), else the output or
    /// the workflow's error; `Err` is a trap.
    pub(crate) async fn call<T: Send + 'static>(
        self,
        instance: &Instance,
        store: &mut Store<T>,
        run: &ComponentExportIndex,
        input: &Input,
        output_limit: usize,
    ) -> wasmtime::Result<Option<Result<Output, RunError>>> {
        match self {
            Self::BytesToString | Self::BytesToBytes => {
                let Input::Bytes(bytes) = input else { return Ok(None) };
                let params = (bytes.as_slice(),);
                match self {
                    Self::BytesToString => typed::<_, _, String>(instance, store, run, params, output_limit).await,
                    _ => typed::<_, _, Vec<u8>>(instance, store, run, params, output_limit).await,
                }
            }
            Self::StringToString | Self::StringToBytes => {
                let Input::Text(text) = input else { return Ok(None) };
                let params = (text.as_str(),);
                match self {
                    Self::StringToString => typed::<_, _, String>(instance, store, run, params, output_limit).await,
                    _ => typed::<_, _, Vec<u8>>(instance, store, run, params, output_limit).await,
                }
            }
        }
    }
}

/// Calls `run-packed` of `instance` on `packed` (the inputs in the packed
/// encoding): its output, still packed, or the workflow's error; `Err` is
/// a trap. `Ok(None)` when the export's type is not
/// `func(list<u8>) -> result<list<u8>, run-error>` after all.
pub(crate) async fn packed<T: Send + 'static>(
    instance: &Instance,
    store: &mut Store<T>,
    run_packed: &ComponentExportIndex,
    packed: &[u8],
    output_limit: usize,
) -> wasmtime::Result<Option<Result<Vec<u8>, RunError>>> {
    let output = typed::<_, _, Vec<u8>>(instance, store, run_packed, (packed,), output_limit).await?;
    Ok(output.map(|result| result.map(|output| output.into_bytes().unwrap_or_default())))
}

/// An output the typed API lifts as one block.
trait TypedOutput: ComponentType + Lift + Send + Sync + 'static {
    /// Its size: its bytes.
    fn size(&self) -> usize;
    /// As a run's output.
    fn into_output(self) -> Output;
}

impl TypedOutput for String {
    fn size(&self) -> usize {
        self.len()
    }
    fn into_output(self) -> Output {
        Output::Text(self)
    }
}

impl TypedOutput for Vec<u8> {
    fn size(&self) -> usize {
        self.len()
    }
    fn into_output(self) -> Output {
        Output::Bytes(self)
    }
}

/// `run-error` as the world declares it, for wasmtime's typed calls (its
/// derives need a type of this crate; [`RunErrorKind`] is the definition,
/// and `From` ties the two case by case).
#[derive(ComponentType, Lift)]
#[component(record)]
struct WitRunError {
    kind: WitKind,
    message: String,
}

// Its values come from the guest, through the derived `Lift`.
#[allow(dead_code)]
#[derive(ComponentType, Lift, Clone, Copy)]
#[component(enum)]
#[repr(u8)]
enum WitKind {
    #[component(name = "invalid-input")]
    InvalidInput,
    #[component(name = "config")]
    Config,
    #[component(name = "failed")]
    Failed,
}

impl From<WitKind> for RunErrorKind {
    fn from(kind: WitKind) -> Self {
        match kind {
            WitKind::InvalidInput => Self::InvalidInput,
            WitKind::Config => Self::Config,
            WitKind::Failed => Self::Failed,
        }
    }
}

/// `run` called typed; `Ok(None)` when its type is not `P -> R` after all.
/// An output over `output_limit` bytes is refused. A `list<u8>` output
/// stays bytes ([`Output::Bytes`]): as `Val`s (40 bytes a byte) an
/// 8 MiB output took 360 MB of the host's memory and 135 ms, against 35 MB
/// and 1 ms kept as bytes (`runs` example, op_trap's `big`).
async fn typed<T: Send + 'static, P, R: TypedOutput>(
    instance: &Instance,
    store: &mut Store<T>,
    run: &ComponentExportIndex,
    params: P,
    output_limit: usize,
) -> wasmtime::Result<Option<Result<Output, RunError>>>
where
    P: wasmtime::component::ComponentNamedList + wasmtime::component::Lower + Send + Sync,
{
    let Ok(run) = instance.get_typed_func::<P, (Result<R, WitRunError>,)>(&mut *store, run) else {
        return Ok(None);
    };
    let (result,) = run.call_async(&mut *store, params).await?;
    Ok(Some(match result {
        Ok(output) if output.size() > output_limit => Err(RunError::OutputTooLarge { limit: output_limit }),
        Ok(output) => Ok(output.into_output()),
        Err(e) => Err(RunError::Workflow { kind: e.kind.into(), message: e.message }),
    }))
}
