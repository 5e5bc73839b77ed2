pub mod alloc_conf;
pub mod catalog;
pub mod diagnostic;
pub mod format;
pub mod plan;
pub mod span;
pub mod syntax;
