//! The WebAssembly module's exports: the page writes a request into memory the module
//! allocates, calls [`oomlint_call`], and reads the answer from [`oomlint_output_ptr`].
//!
//! 1. `oomlint_alloc(n)` → a buffer of `n` bytes; the page writes the method name and the
//!    JSON input into buffers of their own.
//! 2. `oomlint_call(method, method_len, input, input_len)` → the answer's length; it takes
//!    the buffers back (frees them).
//! 3. `oomlint_output_ptr()` → where the answer lies, valid until the next call.

// The exports are `pub` for the linker, not for other crates.
#![allow(unreachable_pub)]

use std::sync::Mutex;

static OUTPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// A buffer of `len` bytes for the page to fill.
#[no_mangle]
pub extern "C" fn oomlint_alloc(len: usize) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len);
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Takes back a buffer of [`oomlint_alloc`] holding `len` bytes.
///
/// # Safety
/// `ptr` and `len` are one buffer that [`oomlint_alloc`] gave, filled, and not yet taken back.
unsafe fn take(ptr: *mut u8, len: usize) -> Vec<u8> {
    // SAFETY: the caller's contract: `ptr` came from a `Vec` of capacity `len`.
    unsafe { Vec::from_raw_parts(ptr, len, len) }
}

/// Runs one request (see [`crate::call`]); returns the answer's length in bytes.
///
/// # Safety
/// Both buffers come from [`oomlint_alloc`] with these lengths, filled by the page.
#[no_mangle]
pub unsafe extern "C" fn oomlint_call(method: *mut u8, method_len: usize, input: *mut u8, input_len: usize) -> usize {
    // SAFETY: the caller's contract.
    let (method, input) = unsafe { (take(method, method_len), take(input, input_len)) };
    let answer = match (std::str::from_utf8(&method), std::str::from_utf8(&input)) {
        (Ok(method), Ok(input)) => crate::call(method, input),
        _ => r#"{"error":"the request is not UTF-8"}"#.to_string(),
    };
    let mut output = OUTPUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    *output = answer.into_bytes();
    output.len()
}

/// Where the last answer lies.
#[no_mangle]
pub extern "C" fn oomlint_output_ptr() -> *const u8 {
    OUTPUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ptr()
}
