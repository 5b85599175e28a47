//! Rebuilds the server when the web client changes (it is embedded with
//! `include_dir!`).
fn main() {
    println!("cargo:rerun-if-changed=../../web");
}
