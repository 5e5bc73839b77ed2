pub mod span; pub mod plan; pub mod catalog; pub mod diagnostic;
