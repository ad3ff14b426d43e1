// runtime/src/hip.c on a machine without an AMD GPU (docs/hip.md): the HIP runtime is loaded at
// run time, so a missing library or a missing device is a NULL arch with a reason, never a load
// failure; hipError_t values map to tg_status; launches report TG_ERR_NO_VARIANT without a
// runtime. The binary links no libamdhip64 (checked by the CMake test beside it).
#include "tilegen/hip.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

TEST(HipRuntime, StatusMapping) {
  EXPECT_EQ(tg_hip_status(0), TG_OK);
  EXPECT_EQ(tg_hip_status(2), TG_ERR_OUT_OF_MEMORY);     // hipErrorOutOfMemory
  EXPECT_EQ(tg_hip_status(1), TG_ERR_INVALID_ARGUMENT);  // hipErrorInvalidValue
  EXPECT_EQ(tg_hip_status(400), TG_ERR_INVALID_ARGUMENT); // hipErrorInvalidHandle
  EXPECT_EQ(tg_hip_status(100), TG_ERR_NO_VARIANT);      // hipErrorNoDevice
  EXPECT_EQ(tg_hip_status(209), TG_ERR_NO_VARIANT);      // hipErrorNoBinaryForGpu
  EXPECT_EQ(tg_hip_status(719), TG_ERR_DEVICE);          // hipErrorLaunchFailure
}

TEST(HipRuntime, NoDeviceHasReason) {
  // TILEGEN_HIP_LIBRARY=/nonexistent (set by ctest) or a real libamdhip64 without a GPU: both
  // give no arch and a sentence.
  const char* why = nullptr;
  const char* arch = tg_hip_device_arch(0, &why);
  if (arch)
    GTEST_SKIP() << "a HIP device is present (" << arch << ")";
  ASSERT_NE(why, nullptr);
  const std::string w = why;
  EXPECT_TRUE(w.rfind("no HIP runtime: ", 0) == 0 || w.rfind("no HIP device", 0) == 0) << w;
  EXPECT_STREQ(tg_hip_device_arch_name(0), "");
  // cached: the same sentence again
  const char* why2 = nullptr;
  EXPECT_EQ(tg_hip_device_arch(0, &why2), nullptr);
  EXPECT_EQ(std::string(why2), w);
  EXPECT_EQ(tg_hip_device_arch(-1, &why), nullptr);
  EXPECT_NE(std::string(why).find("negative"), std::string::npos);
  EXPECT_EQ(tg_hip_device_arch(TG_HIP_CACHED_DEVICES, &why), nullptr);
}

TEST(HipRuntime, LaunchWithoutDeviceIsNoVariant) {
  if (tg_hip_device_arch(0, nullptr))
    GTEST_SKIP() << "a HIP device is present";
  static const unsigned char bytes[1] = {0};
  static const tg_hip_image images[] = {{"gfx942", bytes, bytes + 1}};
  static const char* const kernels[] = {"tg_kernel_16"};
  static tg_hip_module m = {images, 1, kernels, 1, {}};
  const unsigned grid[3] = {1, 1, 1};
  int p = 0;
  EXPECT_EQ(tg_hip_launch(&m, 0, grid, 64, 0, nullptr, &p, sizeof p), TG_ERR_NO_VARIANT);
}

} // namespace
