from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="swin_window_process",
    ext_modules=[CUDAExtension("swin_window_process", ["window_process.cpp", "window_process_kernel.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
