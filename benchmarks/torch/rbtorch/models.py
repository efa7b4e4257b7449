"""The models of rb-torch-train, built the same on every rank for the same
seed (torch.manual_seed before construction; CPU initialisation is
deterministic), so --reducer and --ddp runs start from the same parameters.

  lstm       nn.Embedding(vocab, embed_dim, sparse=True) -> nn.LSTM(embed_dim,
             hidden) -> nn.Linear(hidden, vocab): next-word prediction at every
             position of a window of --context words
  resnet18   torchvision's, num_classes=10, conv1 7x7/2 on 1 input channel
  googlenet  torchvision's, num_classes=10, aux_logits=False,
             init_weights=True, transform_input=False, conv1 on 1 channel
"""
MODELS = ("lstm", "resnet18", "googlenet")
IMAGE_MODELS = ("resnet18", "googlenet")


def build(torch, name, seed, vocab=0, embed_dim=64, hidden=128):
    nn = torch.nn
    torch.manual_seed(seed)
    if name == "lstm":
        class LSTMLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, embed_dim, sparse=True)
                self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True)
                self.decoder = nn.Linear(hidden, vocab)

            def forward(self, x):            # x: [batch, context] word ids
                h, _ = self.lstm(self.embed(x))
                return self.decoder(h).reshape(-1, vocab)   # [batch * context, vocab]

        with torch.no_grad():
            net = LSTMLM()
            net.embed.weight.uniform_(-0.1, 0.1)
        return net
    import torchvision
    if name == "resnet18":
        net = torchvision.models.resnet18(num_classes=10)
        net.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")
        return net
    if name == "googlenet":
        net = torchvision.models.googlenet(num_classes=10, aux_logits=False, init_weights=True,
                                           transform_input=False)
        conv = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.trunc_normal_(conv.weight, mean=0.0, std=0.01, a=-2, b=2)   # as init_weights
        net.conv1.conv = conv
        return net
    raise ValueError(name)


def sparse_parameters(net):
    """Parameters with sparse gradients (the LSTM's embedding table)."""
    return [net.embed.weight] if hasattr(net, "embed") and net.embed.sparse else []
