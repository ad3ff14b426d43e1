// A declaration stub of the parts of Apple's metal-cpp (Metal) that runtime/src/metal.cpp and
// bench/metal/bench_metal.cpp use (see Foundation/Foundation.hpp here). Declarations only.
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
enum ResourceOptions : NS::UInteger { ResourceStorageModeShared = 0 };
class Buffer : public NS::Object {
public:
  void* contents();
};
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
  void commit();
  void waitUntilCompleted();
  double GPUStartTime() const; // CFTimeInterval, seconds
  double GPUEndTime() const;
};
class CommandQueue : public NS::Object {
public:
  CommandBuffer* commandBuffer();
};
class Device : public NS::Object {
public:
  Library* newLibrary(const dispatch_data_t data, NS::Error** error);
  ComputePipelineState* newComputePipelineState(const Function* function, NS::Error** error);
  bool supportsFamily(GPUFamily gpuFamily) const;
  Buffer* newBuffer(NS::UInteger length, ResourceOptions options);
  CommandQueue* newCommandQueue();
};
Device* CreateSystemDefaultDevice();
} // namespace MTL
