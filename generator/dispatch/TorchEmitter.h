// TorchEmitter: <lib>_torch.cpp, the PyTorch operators of a dispatch library (docs/torch.md).
// One C++ translation unit that registers, through TORCH_LIBRARY(<lib>, ...), one operator per
// kernel (torch.ops.<lib>.<kernel>) whose input dtypes pick the type binding, plus its `.out`
// overload; CPU and CUDA implementations call the library's C API (<lib>.h) on torch's current
// stream and device, a Meta implementation gives torch.compile / FakeTensorMode the output
// shapes without running anything. A kernel whose bindings share their input dtypes (a type
// parameter only outputs or scalars use) gets one operator per binding instead, named like its
// C function without the library prefix (<kernel>_<types>). The file needs only PyTorch's C++
// headers and <lib>.h: nothing of tilegen (or Python) at its build or run time.
#pragma once

#include "dispatch/DispatchEmitter.h"
#include "support/Diagnostics.h"

#include <string>

namespace tilegen::dispatch {

// <lib>_torch.cpp
std::string torch_file_name(const std::string& lib);

// Reports (a located error each) the tensors and scalars whose dtype the operators cannot take:
// u16/u32/u64 tensors (torch 1.13 has uint8 only) and u64 scalars (a Python int is an int64).
bool check_torch(const Library& lib, DiagEngine& diag);

// A pure function of `lib` (byte-identical across runs).
std::string emit_torch_binding(const Library& lib);

} // namespace tilegen::dispatch
