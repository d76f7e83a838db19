"""The layers of ``ember.nn``."""
from ..module import Module  # noqa: F401
from .activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention, TransformerEncoderLayer  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm  # noqa: F401
from .pooling import (  # noqa: F401
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from .rnn import (  # noqa: F401
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from .sparse import Embedding  # noqa: F401
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
