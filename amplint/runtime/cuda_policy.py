"""CUDA's autocast policy of torch 2.13, as data: which aten op (``name.overload``) autocast
casts how on CUDA.  The emulation (:mod:`amplint.runtime.emulate`) applies it to CPU tensors.

Source: ``aten/src/ATen/autocast_mode.h`` (the ``AT_FORALL_*`` op lists; the number beside each
op is its line there) and ``aten/src/ATen/autocast_mode.cpp`` (the CUDA block, registered at
line 181 in torch 2.13's dispatcher: ``torch._C._dispatch_dump_table("aten::mm")`` names it,
with the cuDNN convolutions and the banned ``binary_cross_entropy``).  The per-op line numbers
were read from a recent copy of autocast_mode.h (PyTorch main, version not pinned: the dispatcher
reports only the registering line, 181, for every CUDA kernel).  The op set is what the
emulation relies on, and tests/runtime/test_emulate.py checks it against torch 2.13's dispatcher:
every op with an ``AutocastCUDA`` kernel is here, and nothing else (torch 2.11 differs: no
``rms_norm``, the Dimname overloads registered).  The named-tensor overloads of the lists
(``softmax.Dimname``, ``sum.dim_DimnameList``, ``norm.names_ScalarOpt_dim``, ...) get no
``AutocastCUDA`` kernel in torch 2.13 and are left out.

amplint/analysis/data/ is growing a static dtype table of its own (another branch); the two should be
unified into one table the linter and the runtime share.

Policies (``CastPolicy`` in autocast_mode.h):

- ``lower_precision_fp``: floating inputs (not float64) cast to the autocast dtype;
- ``fp32``: floating inputs cast to float32;
- ``fp32_set_opt_dtype``: ``dtype=torch.float32`` when the first input is floating and no dtype
  was given;
- ``fp32_append_dtype``: redispatched to the overload taking a dtype, float32 when the first
  input is floating;
- ``promote``: floating inputs cast to the widest floating type among them;
- ``banned``: raises (binary_cross_entropy).
"""

LOWER_PRECISION_FP = (
    ("_convolution.deprecated", 820),
    ("_convolution", 821),
    ("conv1d", 822),
    ("conv2d", 823),
    ("conv3d", 824),
    ("conv_tbc", 825),
    ("conv_transpose1d", 826),
    ("conv_transpose2d.input", 827),
    ("conv_transpose3d.input", 828),
    ("convolution", 829),
    ("prelu", 830),
    ("addmm", 831),
    ("addmv", 832),
    ("addr", 833),
    ("matmul", 834),
    ("einsum", 835),
    ("mm", 836),
    ("mv", 837),
    ("linalg_vecdot", 838),
    ("linear", 839),
    ("addbmm", 840),
    ("baddbmm", 841),
    ("bmm", 842),
    ("chain_matmul", 843),
    ("linalg_multi_dot", 844),
    ("_thnn_fused_lstm_cell", 845),
    ("_thnn_fused_gru_cell", 846),
    ("lstm_cell", 847),
    ("gru_cell", 848),
    ("rnn_tanh_cell", 849),
    ("rnn_relu_cell", 850),
    ("_scaled_dot_product_flash_attention", 851),
    ("scaled_dot_product_attention", 852),
)
FP32 = (
    ("acos", 855),
    ("asin", 856),
    ("cosh", 857),
    ("erfinv", 858),
    ("exp", 859),
    ("expm1", 860),
    ("log", 861),
    ("log10", 862),
    ("log2", 863),
    ("log1p", 864),
    ("reciprocal", 865),
    ("rsqrt", 866),
    ("sinh", 867),
    ("tan", 868),
    ("pow.Tensor_Scalar", 869),
    ("pow.Tensor_Tensor", 870),
    ("pow.Scalar", 871),
    ("softplus", 872),
    ("layer_norm", 873),
    ("native_layer_norm", 874),
    ("rms_norm", 875),
    ("group_norm", 876),
    ("frobenius_norm.dim", 877),
    ("nuclear_norm", 878),
    ("nuclear_norm.dim", 879),
    ("cosine_similarity", 880),
    ("poisson_nll_loss", 881),
    ("cosine_embedding_loss", 882),
    ("nll_loss", 883),
    ("nll_loss2d", 884),
    ("hinge_embedding_loss", 885),
    ("kl_div", 886),
    ("l1_loss", 887),
    ("smooth_l1_loss", 888),
    ("huber_loss", 889),
    ("mse_loss", 890),
    ("margin_ranking_loss", 891),
    ("multilabel_margin_loss", 892),
    ("soft_margin_loss", 893),
    ("triplet_margin_loss", 894),
    ("multi_margin_loss", 895),
    ("binary_cross_entropy_with_logits", 896),
    ("dist", 897),
    ("pdist", 898),
    ("cdist", 899),
    ("renorm", 900),
    ("logsumexp", 901),
    ("upsample_nearest1d", 902),
    ("_upsample_nearest_exact1d", 903),
    ("upsample_nearest2d", 904),
    ("_upsample_nearest_exact2d", 905),
    ("upsample_nearest3d", 906),
    ("_upsample_nearest_exact3d", 907),
    ("upsample_linear1d", 908),
    ("upsample_bilinear2d", 909),
    ("_upsample_bilinear2d_aa", 910),
    ("upsample_trilinear3d", 911),
    ("upsample_bicubic2d", 912),
    ("_upsample_bicubic2d_aa", 913),
)
FP32_SET_OPT_DTYPE = (
    ("prod", 916),
    ("prod.dim_int", 917),
    ("softmax.int", 919),
    ("log_softmax.int", 921),
    ("cumprod", 923),
    ("cumsum", 925),
    ("linalg_vector_norm", 927),
    ("linalg_matrix_norm", 928),
    ("linalg_matrix_norm.str_ord", 929),
    ("sum", 930),
    ("sum.dim_IntList", 931),
)
FP32_APPEND_DTYPE = (
    ("norm.Scalar", 935),
    ("norm.ScalarOpt_dim", 940),
)
PROMOTE = (
    ("addcdiv", 962),
    ("addcmul", 963),
    ("atan2", 964),
    ("bilinear", 965),
    ("cross", 966),
    ("dot", 967),
    ("vdot", 968),
    ("grid_sampler", 969),
    ("index_put", 970),
    ("tensordot", 971),
    ("scatter_add", 972),
)


# autocast_mode.cpp, the CUDA block (TORCH_LIBRARY_IMPL(aten, Autocast, m), line 181)
CUDNN_LOWER_PRECISION_FP = (
    ("cudnn_convolution", 181),
    ("cudnn_convolution_transpose", 181),
)
BANNED = (("binary_cross_entropy", 181),)
# the message of at::autocast::binary_cross_entropy_banned (autocast_mode.cpp)
BCE_BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)
# fp32_append_dtype: the overload each op is redispatched to, with dtype appended
APPEND_TARGET = {"norm.Scalar": "norm.ScalarOpt_dtype", "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype"}

POLICY = {}
for _policy, _ops in (("lower_precision_fp", LOWER_PRECISION_FP + CUDNN_LOWER_PRECISION_FP),
                      ("fp32", FP32), ("fp32_set_opt_dtype", FP32_SET_OPT_DTYPE),
                      ("fp32_append_dtype", FP32_APPEND_DTYPE), ("promote", PROMOTE),
                      ("banned", BANNED)):
    for _op, _line in _ops:
        POLICY[_op] = (_policy, _line)
