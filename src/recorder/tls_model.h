// The TLS model of the recorder's thread-local state.
//
// The preload library is loaded at start-up, so its TLS is in the static block and
// initial-exec makes each access one %fs-relative load. The attach library
// (libmemloupe_attach.so, the same sources) is dlopen'ed into a running process,
// where the static block has no room for it (glibc keeps ~512 spare bytes; the
// unwinder's memo alone is 3.4 KB): it is built with MEMLOUPE_DYNAMIC_TLS, TLS
// descriptors where the target has them, and pays a descriptor call per access.
#pragma once

#ifdef MEMLOUPE_DYNAMIC_TLS
#define MEMLOUPE_TLS_MODEL __attribute__((tls_model("global-dynamic")))
#else
#define MEMLOUPE_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
