// Codegen profiles: small INI overlays (configs/codegen/*.ini, section [codegen]) that say which
// synchronisation instructions a compiler build emits around signals, so the same kernel can
// run under two builds and be compared. Their costs stay in the platform's sync.* keys.
#pragma once

#include <string>

#include "models/platform/platform_config.h"

namespace ars {

// Resolves `--codegen`: a name in configs/codegen/ (before, after) or a path to an INI file. An
// unknown name is an InputError listing the profiles that exist.
std::string resolve_codegen_path(const std::string& name_or_path);

// Reads the profile at `path` into `config.codegen`; throws InputError naming the file, key or
// value. Keys: name, notify_barrier (pipe_all | drain | none), notify_flush (0 | 1),
// notify_dsb (0 | 1), wait_invalidate (every_wait | wait_all | none), store_fence (0 | 1).
void load_codegen(const std::string& path, PlatformConfig& config);

// The synchronisation of the runtime's hand-written kernels (the HOST builtins), which no
// compiler build changes: pto-isa's TNOTIFY and TWAIT as the kernel template calls them. No
// pipe barrier before a notify (TNOTIFY closes with its own, and the template has already
// waited for its pipes by flag, so it finds them idle); the kernel's stores land before it
// signals (the template waits for MTE3 by flag: a drain); the flush, the atomic and the dsb
// that waits for the reply; no whole-cache invalidate after a wait (TWAIT's polls read the
// cell itself).
Codegen runtime_kernel_sync();

}  // namespace ars
