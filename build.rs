// Rebuild whenever a template or a pin changes: the scaffolds/ tree and
// versions.toml are embedded into the binary at compile time.
fn main() {
    println!("cargo:rerun-if-changed=scaffolds");
    println!("cargo:rerun-if-changed=releases");
    println!("cargo:rerun-if-changed=versions.toml");
    println!("cargo:rerun-if-changed=build.rs");
}
