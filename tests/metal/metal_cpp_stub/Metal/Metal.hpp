// A declaration stub of the parts of Apple's metal-cpp (Metal) that runtime/src/metal.cpp uses
// (see Foundation/Foundation.hpp here). Declarations only.
#pragma once
#include <Foundation/Foundation.hpp>
#include <dispatch/dispatch.h>

namespace MTL {
enum GPUFamily : long { GPUFamilyApple7 = 1007, GPUFamilyApple8 = 1008, GPUFamilyApple9 = 1009 };
struct Size {
  Size(NS::UInteger w, NS::UInteger h, NS::UInteger d);
  NS::UInteger width, height, depth;
};
class Function : public NS::Object {};
class Library : public NS::Object {
public:
  Function* newFunction(const NS::String* functionName);
};
class ComputePipelineState : public NS::Object {
public:
  NS::UInteger maxTotalThreadsPerThreadgroup() const;
};
class Buffer : public NS::Object {};
class ComputeCommandEncoder : public NS::Object {
public:
  void setComputePipelineState(const ComputePipelineState* state);
  void setBuffer(const Buffer* buffer, NS::UInteger offset, NS::UInteger index);
  void setBytes(const void* bytes, NS::UInteger length, NS::UInteger index);
  void setThreadgroupMemoryLength(NS::UInteger length, NS::UInteger index);
  void dispatchThreadgroups(Size threadgroupsPerGrid, Size threadsPerThreadgroup);
  void endEncoding();
};
class Device;
class CommandBuffer : public NS::Object {
public:
  Device* device() const;
  ComputeCommandEncoder* computeCommandEncoder();
};
class Device : public NS::Object {
public:
  Library* newLibrary(const dispatch_data_t data, NS::Error** error);
  ComputePipelineState* newComputePipelineState(const Function* function, NS::Error** error);
  bool supportsFamily(GPUFamily gpuFamily) const;
};
Device* CreateSystemDefaultDevice();
} // namespace MTL
