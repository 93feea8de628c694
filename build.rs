// Rebuild whenever a template or a pin changes: the scaffolds/ tree and
// versions.toml are embedded into the binary at compile time.
fn main() {
    println!("cargo:rerun-if-changed=scaffolds");
    println!("cargo:rerun-if-changed=releases");
    println!("cargo:rerun-if-changed=versions.toml");
    println!("cargo:rerun-if-changed=build.rs");
    // The Kubebuilder release opbuilder matches, for `--version` (a compile-time string):
    // `kubebuilder = "vX.Y.Z"` of versions.toml's [e2e] section, its parity oracle.
    let pins = std::fs::read_to_string("versions.toml").expect("versions.toml is readable");
    let mut section = "";
    let kubebuilder = pins
        .lines()
        .find_map(|l| {
            let l = l.trim();
            if l.starts_with('[') {
                section = l;
                return None;
            }
            let (k, v) = l.split_once('=')?;
            (section == "[e2e]" && k.trim() == "kubebuilder").then(|| v.trim().trim_matches('"'))
        })
        .expect("versions.toml has kubebuilder in [e2e]");
    println!("cargo:rustc-env=OPBUILDER_KUBEBUILDER={kubebuilder}");
}
