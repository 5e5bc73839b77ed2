/// mimalloc: a `check` over many files allocates and frees hundreds of thousands of small
/// nodes and strings, where glibc's allocator took a sixth of the instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    oomlint::cli::main()
}
