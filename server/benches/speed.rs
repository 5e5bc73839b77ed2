//! Speed benchmark (being written): `cargo bench --bench speed`.

fn main() {}
