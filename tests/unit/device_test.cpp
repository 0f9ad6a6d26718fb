// Unit tests of devices and of the executor through them: the host device's memory is
// aligned and zeroed, its copies copy, a launch runs on the device's own thread pool and a
// timed launch measures the call; the executor gives the same outputs on the host (binding
// tensors in place, with no copies) and on a device with memory of its own (copying as
// device.h says), profiles every step, and two executors with pools of different sizes
// run side by side. Course module 4.
#include "minic/runtime/device.h"
#include "minic/runtime/executor.h"
#include "minic/runtime/thread_pool.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

namespace minic::runtime {
namespace {

using namespace std::chrono_literals;

Tensor f32_tensor(const std::vector<float>& values) {
  Tensor tensor(TensorType{DType::f32, {static_cast<int64_t>(values.size())}});
  std::copy(values.begin(), values.end(), tensor.values<float>().begin());
  return tensor;
}

std::vector<float> floats(const Tensor& tensor) {
  auto values = tensor.values<float>();
  return {values.begin(), values.end()};
}

// The closure of count_chunks: how many chunks of a parallel loop ran.
void count_chunks(void* closure, int64_t, int64_t) {
  ++*static_cast<std::atomic<int>*>(closure);
}

TEST_CASE("the host device allocates aligned, zeroed memory, and copies both ways",
          "[device]") {
  HostDevice device(1);
  for (int64_t alignment : {64, 4096}) {
    for (int64_t bytes : {0, 1, 100, 1 << 20}) {
      INFO(bytes << " bytes aligned to " << alignment);
      auto* memory = static_cast<unsigned char*>(device.allocate(bytes, alignment));
      REQUIRE(memory != nullptr);
      CHECK(reinterpret_cast<uintptr_t>(memory) % alignment == 0);
      bool zeroed = true;
      for (int64_t i = 0; i < bytes; ++i) zeroed = zeroed && memory[i] == 0;
      CHECK(zeroed);
      std::vector<unsigned char> source(static_cast<size_t>(bytes));
      for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 1);
      device.copy_to_device(memory, source.data(), bytes);
      std::vector<unsigned char> back(source.size());
      device.copy_to_host(back.data(), memory, bytes);
      CHECK(back == source);
      device.free(memory);
    }
  }
  CHECK_THROWS_WITH(device.allocate(16, 48), Catch::Contains("not a power of two"));
}

TEST_CASE("a host launch runs the kernel on the calling thread, on the device's pool",
          "[device]") {
  for (int threads : {1, 3}) {
    INFO(threads << " threads");
    HostDevice device(threads);
    CHECK(device.num_threads() == threads);
    CHECK(device.describe() == (threads == 1 ? "host CPU, 1 thread" : "host CPU, 3 threads"));
    std::atomic<int> chunks{0};
    std::thread::id ran_on;
    KernelCall kernel = [&](void** args) {
      ran_on = std::this_thread::get_id();
      minic_parallel_for(count_chunks, args[0], 30);
    };
    void* args[] = {&chunks};
    device.launch(kernel, args);
    CHECK(ran_on == std::this_thread::get_id());
    CHECK(chunks == threads);  // one chunk per thread of the device's pool
    CHECK(current_thread_pool() == nullptr);  // installed for the launch only
  }
}

TEST_CASE("a timed launch runs the kernel and measures at least the time it took",
          "[device]") {
  HostDevice device(1);
  int calls = 0;
  KernelCall kernel = [&](void**) {
    ++calls;
    std::this_thread::sleep_for(3ms);  // sleeps at least that long: a lower bound only
  };
  double milliseconds = device.launch_timed(kernel, nullptr);
  CHECK(calls == 1);
  CHECK(milliseconds >= 3.0);
}

// --- the executor -------------------------------------------------------------------------

// A plan of two steps over four buffers, with the kinds of everything the executor binds:
//   t = x * w      compiled, writing the intermediate t (in the arena)
//   y = t + 1      a reference kernel
// and the outputs y, w (a constant passed through) and x (an input passed through).
// The compiled step notes the address it saw for x in `seen_x`.
ExecutionPlan two_step_plan(void** seen_x) {
  ExecutionPlan plan;
  plan.buffers = {
      {"x", {DType::f32, {4}}, BufferKind::input, nullptr, 0},
      {"w", {DType::f32, {4}}, BufferKind::constant,
       std::make_shared<const Tensor>(f32_tensor({1, 2, 3, 4})), 0},
      {"t", {DType::f32, {4}}, BufferKind::intermediate, nullptr, 0},
      {"y", {DType::f32, {4}}, BufferKind::output, nullptr, 0},
  };
  plan.memory = plan_memory({{16, 0, 1}});
  plan.buffers[2].arena_offset = plan.memory.offsets[0];
  plan.inputs = {0};
  plan.outputs = {3, 1, 0};
  PlanStep multiply{"mul", "Mul", true, {}, {0, 1, 2}, 1, "mul"};
  multiply.call = [seen_x](void** args) {
    *seen_x = args[0];
    auto* x = static_cast<const float*>(args[0]);
    auto* w = static_cast<const float*>(args[1]);
    auto* t = static_cast<float*>(args[2]);
    for (int i = 0; i < 4; ++i) t[i] = x[i] * w[i];
  };
  PlanStep add_one{"add_one", "Add", false, {}, {2, 3}, 1, ""};
  add_one.call = [](void** args) {
    auto* t = static_cast<const float*>(args[0]);
    auto* y = static_cast<float*>(args[1]);
    for (int i = 0; i < 4; ++i) y[i] = t[i] + 1;
  };
  plan.steps = {multiply, add_one};
  return plan;
}

void check_two_step_outputs(const std::vector<Tensor>& outputs, const Tensor& x) {
  REQUIRE(outputs.size() == 3);
  std::vector<float> input = floats(x);
  CHECK(floats(outputs[0]) == std::vector<float>{input[0] * 1 + 1, input[1] * 2 + 1,
                                                 input[2] * 3 + 1, input[3] * 4 + 1});
  CHECK(floats(outputs[1]) == std::vector<float>{1, 2, 3, 4});
  CHECK(floats(outputs[2]) == input);
}

// The host device, counting its copies.
class CountingHostDevice : public HostDevice {
 public:
  explicit CountingHostDevice(int* to_device, int* to_host)
      : HostDevice(1), to_device_(to_device), to_host_(to_host) {}
  void copy_to_device(void* destination, const void* source, int64_t bytes) override {
    ++*to_device_;
    HostDevice::copy_to_device(destination, source, bytes);
  }
  void copy_to_host(void* destination, const void* source, int64_t bytes) override {
    ++*to_host_;
    HostDevice::copy_to_host(destination, source, bytes);
  }

 private:
  int* to_device_;
  int* to_host_;
};

// A device with memory of its own, as a GPU has: it keeps a list of what it allocated,
// counts its copies, and a launch fails if an argument is not its memory.
class SeparateMemoryDevice : public Device {
 public:
  int to_device = 0;
  int to_host = 0;
  int synchronized = 0;

  std::string describe() const override { return "separate memory"; }
  bool shares_host_memory() const override { return false; }
  void* allocate(int64_t bytes, int64_t alignment) override {
    void* memory = host_.allocate(bytes, alignment);
    blocks_[memory] = bytes;
    return memory;
  }
  void free(void* memory) override {
    blocks_.erase(memory);
    host_.free(memory);
  }
  void copy_to_device(void* destination, const void* source, int64_t bytes) override {
    REQUIRE(is_device_memory(destination, bytes));
    ++to_device;
    std::memcpy(destination, source, static_cast<size_t>(bytes));
  }
  void copy_to_host(void* destination, const void* source, int64_t bytes) override {
    REQUIRE(is_device_memory(source, bytes));
    ++to_host;
    std::memcpy(destination, source, static_cast<size_t>(bytes));
  }
  // (Used with two_step_plan only: its compiled step takes three buffers of 16 bytes.)
  void launch(const KernelCall& kernel, void** args) override {
    for (int a = 0; a < 3; ++a) REQUIRE(is_device_memory(args[a], 16));
    kernel(args);
  }
  double launch_timed(const KernelCall& kernel, void** args) override {
    launch(kernel, args);
    return 0.5;
  }
  void synchronize() override { ++synchronized; }
  size_t blocks() const { return blocks_.size(); }

 private:
  bool is_device_memory(const void* pointer, int64_t bytes) const {
    auto* address = static_cast<const std::byte*>(pointer);
    for (const auto& [block, size] : blocks_) {
      auto* start = static_cast<const std::byte*>(block);
      if (address >= start && address + bytes <= start + size) return true;
    }
    return false;
  }

  HostDevice host_{1};
  std::map<void*, int64_t> blocks_;
};

TEST_CASE("on the host, the executor binds inputs, outputs and constants in place",
          "[device][executor]") {
  void* seen_x = nullptr;
  int to_device = 0;
  int to_host = 0;
  Executor executor(two_step_plan(&seen_x),
                    std::make_unique<CountingHostDevice>(&to_device, &to_host));
  CHECK(executor.device().shares_host_memory());
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor> inputs = {f32_tensor({1.5f, -2, 0.25f, 8 + static_cast<float>(run)})};
    std::vector<Tensor> outputs = executor.run(inputs);
    check_two_step_outputs(outputs, inputs[0]);
    CHECK(seen_x == inputs[0].bytes().data());  // the caller's tensor itself
  }
  CHECK(to_device == 0);
  CHECK(to_host == 2 * 2);  // per run: the two outputs that are an input and a constant
}

TEST_CASE("on a device with memory of its own, the executor copies as device.h says",
          "[device][executor]") {
  void* seen_x = nullptr;
  auto owned = std::make_unique<SeparateMemoryDevice>();
  SeparateMemoryDevice& device = *owned;
  Executor executor(two_step_plan(&seen_x), std::move(owned));
  // Loading: the arena, one buffer for each of x, w and y, and w copied in.
  CHECK(device.blocks() == 4);
  CHECK(device.to_device == 1);
  CHECK(device.to_host == 0);

  std::vector<Tensor> inputs = {f32_tensor({1.5f, -2, 0.25f, 8})};
  std::vector<Tensor> outputs = executor.run(inputs);
  check_two_step_outputs(outputs, inputs[0]);
  CHECK(seen_x != inputs[0].bytes().data());  // the device's copy of it
  // The run: x in; for the reference step, t out and y back in; the three outputs out.
  CHECK(device.to_device == 1 + 1 + 1);
  CHECK(device.to_host == 1 + 3);
  CHECK(device.synchronized == 2);  // before the reference step, and after the steps
}

TEST_CASE("a profiled run times every step, through the device for compiled ones",
          "[device][executor]") {
  void* seen_x = nullptr;
  Executor executor(two_step_plan(&seen_x), std::make_unique<SeparateMemoryDevice>());
  std::vector<StepProfile> profile;
  Tensor x = f32_tensor({1, 2, 3, 4});
  check_two_step_outputs(executor.run({x}, &profile), x);
  REQUIRE(profile.size() == 2);
  CHECK(profile[0].kernel == "mul");
  CHECK(profile[0].op == "Mul");
  CHECK(profile[0].compiled);
  CHECK(profile[0].milliseconds == 0.5);  // what the device's timer said
  CHECK(profile[1].kernel == "add_one");
  CHECK_FALSE(profile[1].compiled);
  CHECK(profile[1].milliseconds >= 0);
}

TEST_CASE("the executor names a wrong input", "[device][executor]") {
  void* seen_x = nullptr;
  Executor executor(two_step_plan(&seen_x), std::make_unique<HostDevice>(1));
  CHECK_THROWS_WITH(executor.run({}), Catch::Contains("takes 1 input, given 0"));
  CHECK_THROWS_WITH(executor.run({f32_tensor({1, 2})}), Catch::Contains("input 'x' must be"));
}

// One compiled step with a parallel loop of 64 iterations, writing how many chunks ran.
ExecutionPlan chunk_counting_plan() {
  ExecutionPlan plan;
  plan.buffers = {{"chunks", {DType::i64, {1}}, BufferKind::output, nullptr, 0}};
  plan.outputs = {0};
  PlanStep step{"count", "Count", true, {}, {0}, 1, "count"};
  step.call = [](void** args) {
    std::atomic<int> chunks{0};
    minic_parallel_for(count_chunks, &chunks, 64);
    *static_cast<int64_t*>(args[0]) = chunks;
  };
  plan.steps = {step};
  return plan;
}

TEST_CASE("two executors with pools of different sizes run side by side, each on its own",
          "[device][executor]") {
  Executor one(chunk_counting_plan(), std::make_unique<HostDevice>(1));
  Executor four(chunk_counting_plan(), std::make_unique<HostDevice>(4));
  auto chunks = [](Executor& executor) { return executor.run({})[0].values<int64_t>()[0]; };
  CHECK(chunks(one) == 1);
  CHECK(chunks(four) == 4);
  CHECK(chunks(one) == 1);  // the second executor left nothing behind

  // At the same time, on two threads.
  std::atomic<int> wrong{0};
  auto keep_running = [&](Executor& executor, int64_t expected) {
    for (int run = 0; run < 200; ++run) {
      if (chunks(executor) != expected) ++wrong;
    }
  };
  std::thread first([&] { keep_running(one, 1); });
  std::thread second([&] { keep_running(four, 4); });
  first.join();
  second.join();
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace minic::runtime
