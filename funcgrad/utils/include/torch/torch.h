// funcgrad: everything lives in <torch/extension.h> (no libtorch or pybind11 is needed).
#pragma once
#include <torch/extension.h>
