//! The global allocator of Braid's Wasm builds (feature `wasm-allocator`):
//! talc, fed first with the free end of the module's initial memory and
//! only then with `memory.grow`.
//!
//! Rust's default Wasm allocators (dlmalloc, and talc's own Wasm source)
//! grow the memory on their first allocation, leaving the initial memory
//! past the linker's `__heap_base` unused (about 60 KiB: the initial memory
//! is the 1 MiB stack, the data and the rest of their last page). A grown
//! memory costs a component host on every run: wasmtime's pooling
//! allocator makes the grown pages accessible, then inaccessible again when
//! it resets the slot, and each `mprotect` flushes other cores' TLBs.
//! Measured with the CID workflow's component (64 B, `cargo run --profile
//! perf -p braid-engine --example runs`, three interleaved rounds of 5000
//! runs): 20.3 to 20.8 us a run with talc's own Wasm source, 7.4 to 10
//! with this one.

use core::alloc::Layout;
use core::ptr::NonNull;

use talc::base::binning::Binning;
use talc::base::Talc;
use talc::cell::TalcSyncCell;
use talc::source::Source;
use talc::wasm::WasmBinning;

const PAGE: usize = 64 << 10;

/// The allocator: single-threaded Wasm only (`TalcSyncCell::new_wasm`
/// refuses anything else at compile time).
#[global_allocator]
static ALLOCATOR: TalcSyncCell<InitialThenGrow, WasmBinning> =
    TalcSyncCell::new_wasm(InitialThenGrow { started: false, end: None });

/// Talc's source of memory: the initial memory's free end on the first
/// call, then pages from `memory.grow`, each extending the heap when it
/// follows it (nothing else in the module grows the memory).
#[derive(Debug)]
struct InitialThenGrow {
    started: bool,
    /// The heap's end, if one was claimed.
    end: Option<NonNull<u8>>,
}

// SAFETY: `acquire` only claims memory nothing else uses (the linker puts
// nothing past `__heap_base`; grown pages are new) and allocates nothing.
unsafe impl Source for InitialThenGrow {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        if !talc.source.started {
            talc.source.started = true;
            extern "C" {
                /// Where the linker ends the data (and stack): the rest of
                /// the initial memory is free.
                static __heap_base: u8;
            }
            let base = (&raw const __heap_base) as *mut u8;
            let end = core::arch::wasm32::memory_size(0) * PAGE;
            if let Some(free) = end.checked_sub(base as usize) {
                // SAFETY: `base..end` is memory no one else uses (above).
                talc.source.end = unsafe { talc.claim(base, free) };
                if talc.source.end.is_some() {
                    return Ok(());
                }
            }
        }
        // Enough pages for `layout` with talc's per-heap and per-chunk
        // overhead (a few words); if short, talc asks again and the next
        // pages extend these.
        let pages = (layout.size() + layout.align() + 256).div_ceil(PAGE);
        let previous = core::arch::wasm32::memory_grow(0, pages);
        if previous == usize::MAX {
            return Err(());
        }
        let (base, size) = ((previous * PAGE) as *mut u8, pages * PAGE);
        talc.source.end = match talc.source.end {
            // SAFETY: `end` is this heap's end, and the new pages follow it.
            Some(end) if core::ptr::eq(end.as_ptr(), base) => Some(unsafe { talc.extend(end, base.add(size)) }),
            // SAFETY: the new pages are memory no one else uses.
            _ => unsafe { talc.claim(base, size) },
        };
        talc.source.end.map(|_| ()).ok_or(())
    }
}
