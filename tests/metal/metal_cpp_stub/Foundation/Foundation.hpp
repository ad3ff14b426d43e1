// A declaration stub of the parts of Apple's metal-cpp (Foundation) that runtime/src/metal.cpp
// and bench/metal/bench_metal.cpp use, with the signatures of metal-cpp's headers, so that the file is compiled on Linux
// (test metal.runtime_compiles). Declarations only: nothing here runs.
#pragma once
#include <cstdint>

namespace NS {
using UInteger = unsigned long;
using Integer = long;
enum StringEncoding : UInteger { UTF8StringEncoding = 4 };
class Object {
public:
  void release();
};
class String : public Object {
public:
  static String* string(const char* s, StringEncoding encoding);
  const char* utf8String() const;
};
class Error : public Object {
public:
  String* localizedDescription() const;
};
struct OperatingSystemVersion {
  Integer majorVersion, minorVersion, patchVersion;
};
class ProcessInfo : public Object {
public:
  static ProcessInfo* processInfo();
  bool isOperatingSystemAtLeastVersion(OperatingSystemVersion version) const;
};
} // namespace NS
