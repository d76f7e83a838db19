"""``nn.utils``: gradient clipping, parameter/vector conversion, sequence packing."""
from . import clip_grad, convert_parameters, rnn  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
