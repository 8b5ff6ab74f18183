//! IP lookups (written with the bundled registry).

fn main() {}
