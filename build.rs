// Rebuild whenever a template or a pin changes: the scaffolds/ tree and
// versions.toml are embedded into the binary at compile time.
fn main() {
    println!("cargo:rerun-if-changed=scaffolds");
    println!("cargo:rerun-if-changed=releases");
    println!("cargo:rerun-if-changed=versions.toml");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string("versions.toml").expect("versions.toml is readable");
    let pins: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("versions.toml: {e}"));
    // The Kubebuilder release opbuilder matches, for `--version` (a compile-time string):
    // `kubebuilder` of versions.toml's [e2e] section, its parity oracle.
    let kubebuilder = pins
        .get("e2e")
        .and_then(|s| s.get("kubebuilder"))
        .and_then(|v| v.as_str())
        .expect("versions.toml has kubebuilder = \"vX.Y.Z\" in [e2e]");
    println!("cargo:rustc-env=OPBUILDER_KUBEBUILDER={kubebuilder}");
    // The pins as JSON, which src/versions.rs reads at run time: parsing TOML cost every command
    // about 0.3 M instructions (a tenth of `init`), parsing JSON a few thousand.
    let json = serde_json::to_string(&pins).expect("TOML values convert to JSON");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("versions.json"), json).expect("OUT_DIR is writable");
}
