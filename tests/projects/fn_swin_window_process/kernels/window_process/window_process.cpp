#include <torch/extension.h>

at::Tensor shift_partition_forward_cuda(at::Tensor x, int64_t stride);
at::Tensor shift_partition_backward_cuda(at::Tensor grad, int64_t stride);

static int64_t offset(int64_t h, int64_t w, int64_t c, int64_t shift) { return ((shift % h + h) % h) * w * c; }

at::Tensor shift_partition_forward(at::Tensor x, /* at::Tensor out, */ int64_t b, int64_t h, int64_t w, int64_t c, int64_t shift, int64_t window) {
    return shift_partition_forward_cuda(x.contiguous(), offset(h, w, c, shift));
}

at::Tensor shift_partition_backward(at::Tensor grad, int64_t b, int64_t h, int64_t w, int64_t c, int64_t shift, int64_t window) {
    return shift_partition_backward_cuda(grad.contiguous(), offset(h, w, c, shift));
}

at::Tensor merge_unshift_forward(at::Tensor windows, int64_t b, int64_t h, int64_t w, int64_t c, int64_t shift, int64_t window) {
    return shift_partition_backward_cuda(windows.contiguous(), offset(h, w, c, -shift));
}

at::Tensor merge_unshift_backward(at::Tensor grad, int64_t b, int64_t h, int64_t w, int64_t c, int64_t shift, int64_t window) {
    return shift_partition_forward_cuda(grad.contiguous(), offset(h, w, c, -shift));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("shift_partition_forward", &shift_partition_forward);
    m.def("shift_partition_backward", &shift_partition_backward);
    m.def("merge_unshift_forward", &merge_unshift_forward);
    m.def("merge_unshift_backward", &merge_unshift_backward);
}
