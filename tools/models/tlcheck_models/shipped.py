"""The models people ship, built by their own libraries with random weights.

Each builder constructs a model from a configuration (transformers) or with
``weights=None`` (torchvision) under the caller's ``torch.manual_seed``:
nothing is downloaded, no hub is contacted. transformers and torchvision are
imported inside the builders, so the plain-torch part of the zoo works
without them.

* ``bert``: ``BertModel`` (Devlin et al. 2019), 2 layers, hidden 32,
  2 heads, intermediate 64, no pooler; output the last hidden state on 8
  token ids (1×8×32). Exact GELU (``Erf``), LayerNorm, the additive
  attention mask the library builds from an all-ones mask.
* ``llama``: ``LlamaForCausalLM`` (Touvron et al. 2023), 2 layers, hidden
  32, 2 heads, intermediate 64: RMSNorm, rotary position embeddings, a SiLU
  gated MLP, the library's causal mask; output the logits (1×8×50).
* ``vit``: ``ViTModel`` (Dosovitskiy et al. 2021), image 32, patch 8,
  2 layers, hidden 32, 2 heads, no pooler; output the last hidden state
  (1×17×32).
* ``resnet18``, ``mobilenet_v2``, ``mobilenet_v3_small``: torchvision's
  definitions with ``weights=None`` and 1000 classes, on a 1×3×64×64 image.

The transformers models use ``attn_implementation="eager"`` (the attention
written as matmul and softmax, as every exporter can trace it) and return a
plain tensor through :class:`Field`.
"""

from __future__ import annotations

import torch
from torch import nn


class Field(nn.Module):
    """Wraps a transformers model so that forward returns one tensor of its output."""

    def __init__(self, model: nn.Module, field: str) -> None:
        super().__init__()
        self.model = model
        self.field = field

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(x), self.field)


def bert() -> nn.Module:
    import transformers

    cfg = transformers.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=16, attn_implementation="eager")
    return Field(transformers.BertModel(cfg, add_pooling_layer=False), "last_hidden_state")


def llama() -> nn.Module:
    import transformers

    cfg = transformers.LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16,
                                   attn_implementation="eager", use_cache=False)
    return Field(transformers.LlamaForCausalLM(cfg), "logits")


def vit() -> nn.Module:
    import transformers

    cfg = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64, attn_implementation="eager")
    return Field(transformers.ViTModel(cfg, add_pooling_layer=False), "last_hidden_state")


def resnet18() -> nn.Module:
    import torchvision

    return torchvision.models.resnet18(weights=None)


def mobilenet_v2() -> nn.Module:
    import torchvision

    return torchvision.models.mobilenet_v2(weights=None)


def mobilenet_v3_small() -> nn.Module:
    import torchvision

    return torchvision.models.mobilenet_v3_small(weights=None)
