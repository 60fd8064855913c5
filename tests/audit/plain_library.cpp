// A shared library with no device code (built by the host compiler alone): its files hold no
// .nv_fatbin section, so it adds no kernel names.
extern "C" __attribute__((visibility("default"))) int audit_plain_answer() { return 42; }
