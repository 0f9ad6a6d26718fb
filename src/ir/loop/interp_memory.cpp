// Memory of the loop IR interpreter: buffer storage and the data-race tracker.
// Course module 3.
//
// Elements are copied in and out of the byte arrays with memcpy, so no buffer is ever
// read through a pointer of the wrong type or alignment. Bools are read as bytes
// (nonzero is true), so the fill pattern of an allocation reads as a valid bool.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#include "interp_thread.h"

#include <cstring>
#include <limits>

namespace minic::loop::interp {

int64_t storage_size(const BufferNode& buffer) {
  int64_t last = 0;
  for (size_t d = 0; d < buffer.shape.size(); ++d) {
    if (buffer.shape[d] == 0) return 0;
    last += (buffer.shape[d] - 1) * buffer.strides[d];
  }
  return last + 1;
}

std::unique_ptr<Storage> Storage::allocate(const Buffer& buffer) {
  if (is_storage_only(buffer->dtype)) fail_storage_only(buffer->dtype);
  auto storage = std::make_unique<Storage>();
  storage->buffer = buffer;
  storage->size = storage_size(*buffer);
  check_shape({storage->size}, buffer->dtype, "buffer " + buffer->name);
  storage->owned.resize(static_cast<size_t>(storage->size * dtype_size(buffer->dtype)),
                        std::byte{0xA5});
  storage->bytes = storage->owned;
  if (is_float(buffer->dtype)) {
    visit_dtype(buffer->dtype, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<compute_t<T>>) {
        T nan = static_cast<T>(std::numeric_limits<compute_t<T>>::quiet_NaN());
        for (int64_t i = 0; i < storage->size; ++i) {
          std::memcpy(storage->bytes.data() + i * sizeof(T), &nan, sizeof(T));
        }
      }
    });
  }
  return storage;
}

std::unique_ptr<Storage> Storage::wrap(const Buffer& buffer, Tensor& tensor) {
  MINIC_CHECK(tensor.dtype() == buffer->dtype && tensor.shape() == buffer->shape);
  auto storage = std::make_unique<Storage>();
  storage->buffer = buffer;
  storage->size = tensor.num_elements();
  storage->bytes = tensor.bytes();
  return storage;
}

Scalar Storage::read(int64_t offset) const {
  return visit_dtype(buffer->dtype, [&]<typename T>() {
    const std::byte* source = bytes.data() + offset * static_cast<int64_t>(sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t byte;
      std::memcpy(&byte, source, 1);
      return make_scalar<bool>(byte != 0);
    } else {
      T element;
      std::memcpy(&element, source, sizeof(T));
      return make_scalar<T>(static_cast<compute_t<T>>(element));
    }
  });
}

bool Storage::write(int64_t offset, Scalar value) {
  return visit_dtype(buffer->dtype, [&]<typename T>() {
    std::byte* target = bytes.data() + offset * static_cast<int64_t>(sizeof(T));
    std::byte element[sizeof(T)];
    if constexpr (std::is_same_v<T, bool>) {
      element[0] = std::byte{static_cast<uint8_t>(get<bool>(value) ? 1 : 0)};
    } else {
      T typed = static_cast<T>(get<T>(value));
      std::memcpy(element, &typed, sizeof(T));
    }
    bool changed = std::memcmp(target, element, sizeof(T)) != 0;
    std::memcpy(target, element, sizeof(T));
    return changed;
  });
}

// --- races ----------------------------------------------------------------------------------

std::string thread_name(const std::array<int64_t, 3>& extents, int64_t id) {
  return fmt::format("threadIdx ({}, {}, {})", id % extents[0], id / extents[0] % extents[1],
                     id / (extents[0] * extents[1]));
}

void RaceTracker::race(const Storage& storage, int64_t offset, const std::string& what) const {
  fail("data race on {} buffer {}, element {}: {} since the last barrier (a barrier is missing)",
       memory_scope_name(storage.buffer->scope), storage.buffer->name, offset, what);
}

void RaceTracker::on_read(const Storage& storage, int64_t offset, int64_t thread) {
  Access& access = accesses_[Key{&storage, offset}];
  if (access.changer >= 0 && access.changer != thread) {
    race(storage, offset, fmt::format("{} reads it after {} changed it", name(thread),
                                      name(access.changer)));
  }
  if (access.reader < 0) {
    access.reader = thread;
  } else if (access.reader != thread) {
    access.many_readers = true;
  }
}

void RaceTracker::on_change(const Storage& storage, int64_t offset, int64_t thread) {
  Access& access = accesses_[Key{&storage, offset}];
  if (access.changer >= 0 && access.changer != thread) {
    race(storage, offset, fmt::format("{} and {} both write it, different values",
                                      name(access.changer), name(thread)));
  }
  if (access.reader >= 0 && access.reader != thread) {
    race(storage, offset, fmt::format("{} changes it after {} read it", name(thread),
                                      name(access.reader)));
  }
  if (access.many_readers) {
    race(storage, offset, fmt::format("{} changes it after other threads read it",
                                      name(thread)));
  }
  access.changer = thread;
}

}  // namespace minic::loop::interp
