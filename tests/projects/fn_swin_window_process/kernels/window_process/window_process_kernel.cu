// Index-remapping copies only: every element moves, none is computed.
#include <torch/extension.h>

template <typename scalar_t>
__global__ void shift_partition_kernel(const scalar_t* in, scalar_t* out, int64_t n, int64_t stride) {
    int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[(i + stride) % n];
}

at::Tensor shift_partition_forward_cuda(at::Tensor x, int64_t stride) {
    auto out = at::empty_like(x);
    int64_t n = x.numel();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "shift_partition_forward", ([&] {
        shift_partition_kernel<scalar_t><<<(n + 255) / 256, 256>>>(
            x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n, stride);
    }));
    return out;
}

at::Tensor shift_partition_backward_cuda(at::Tensor grad, int64_t stride) {
    auto out = at::empty_like(grad);
    int64_t n = grad.numel();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(grad.scalar_type(), "shift_partition_backward", ([&] {
        shift_partition_kernel<scalar_t><<<(n + 255) / 256, 256>>>(
            grad.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n, n - stride);
    }));
    return out;
}
