// Ahead-of-time compilation for a CUDA target: the kernels of a model as CUDA C, PTX and a
// cubin in a directory. Course module 6.
//
// `minic compile MODEL --target cuda -o DIR` writes, beside a copy of the model:
//   kernels.cu          the CUDA C of every kernel, one program (include/minic/codegen/cuda.h)
//   kernels.sm_XX.ptx   NVRTC's PTX for the target's architecture (a newer driver can JIT it)
//   kernels.sm_XX.cubin the machine code for that architecture (cuModuleLoadData loads it)
//   cuda_launches.json  each function's scratch buffers and launches: kernel, grid, block,
//                       dynamic shared memory, the arguments it takes and the integers
//                       after them (a custom op's hand-written kernel: its element count)
// NVRTC is needed; a CUDA driver is not.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#include "minic/driver/compile.h"

#include "minic/support/error.h"
#include "minic/support/file.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace minic {

namespace fs = std::filesystem;

void save_cuda_model(const CompiledModel& model, const std::string& onnx_path,
                     const std::string& dir) {
  const CudaProgram* program = model.cuda();
  if (!program) fail("{} was compiled for {}, not a CUDA target", onnx_path, model.target().str());
  if (!program->binary) fail("{}: the kernels were not compiled by NVRTC (--emulate)", onnx_path);
  fs::create_directories(dir);
  fs::copy_file(onnx_path, fs::path(dir) / "model.onnx", fs::copy_options::overwrite_existing);
  const std::string arch = program->binary->arch;
  write_file((fs::path(dir) / "kernels.cu").string(), program->module.source);
  write_file((fs::path(dir) / ("kernels." + arch + ".ptx")).string(), program->binary->ptx);
  write_file((fs::path(dir) / ("kernels." + arch + ".cubin")).string(), program->binary->cubin);

  nlohmann::ordered_json launches = nlohmann::ordered_json::array();
  for (const codegen::CudaFunction& function : program->module.functions) {
    nlohmann::ordered_json entry;
    entry["function"] = function.name;
    entry["params"] = function.num_params;
    entry["scratch"] = nlohmann::ordered_json::array();
    for (const codegen::CudaScratch& scratch : function.scratch) {
      entry["scratch"].push_back({{"name", scratch.name}, {"bytes", scratch.bytes}});
    }
    entry["launches"] = nlohmann::ordered_json::array();
    for (const codegen::CudaLaunch& launch : function.launches) {
      entry["launches"].push_back({{"kernel", launch.kernel},
                                   {"grid", launch.grid},
                                   {"block", launch.block},
                                   {"dynamic_shared_bytes", launch.dynamic_shared_bytes},
                                   {"args", launch.args},
                                   {"scalars", launch.scalars}});
    }
    launches.push_back(std::move(entry));
  }
  nlohmann::ordered_json manifest;
  manifest["target"] = model.target().str();
  manifest["functions"] = std::move(launches);
  manifest["refused"] = program->refused;
  write_file((fs::path(dir) / "cuda_launches.json").string(), manifest.dump(2) + "\n");
}

}  // namespace minic
