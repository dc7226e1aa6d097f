"""Example-style PyTorch graph-network programs (a GCN with a sparse adjacency matrix, GAT attention) and the
sparse COO API they use, written against `torch` and run unchanged on funcgrad through the import shim of
test_torch_example_programs.

Where real torch is installed, each program also runs on it from the same initial weights (torch's
state_dict loaded into the funcgrad model) and the two runs' losses, outputs and gradients must agree to
float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

from test_torch_example_programs import close, copy_weights, run_on_funcgrad, run_on_torch


# ---------------------------------------------------------------------------------------------- GCN
GCN = """
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.optim import Adam

V, NF = 30, 8

def load_graph():
    rng = np.random.RandomState(0)
    feats = (rng.rand(V, NF) < 0.3).astype(np.int32)
    feats[:, 0] = 1
    feats[5] = 0                                   # a node with no features: 1/0 -> inf -> 0
    edges = rng.randint(0, V, size=(80, 2)).astype(np.int32)   # with repeated edges
    labels = rng.randint(0, 3, V)
    features = torch.FloatTensor(feats)
    scale = 1 / torch.sum(features, dim=1)
    scale[scale == float('inf')] = 0
    features = torch.diag(scale).to_sparse() @ features
    E = edges.shape[0]
    adj = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    raw = adj
    adj = torch.eye(V) + adj
    deg = torch.sqrt(1 / torch.sum(adj, dim=1))
    deg[deg == float('inf')] = 0
    deg = torch.diag(deg).to_sparse()
    adj = deg @ adj @ deg
    return features.to_sparse(), torch.LongTensor(labels), adj.to_sparse(), raw

class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=True):
        super().__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, x, adj):
        out = torch.spmm(adj, torch.mm(x, self.kernel))
        return out + self.bias if self.bias is not None else out

class GCN(nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.gc1, self.gc2 = GraphConv(i, h), GraphConv(h, o)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x, adj):
        x = self.dropout(F.relu(self.gc1(x, adj)))
        return F.log_softmax(self.gc2(x, adj), dim=1)

def make_model():
    return GCN(NF, 16, 3)

def train(model, steps=5):
    x, y, adj, raw = load_graph()
    opt = Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    crit = nn.NLLLoss()
    idx = torch.arange(V)
    train_idx, val_idx = idx[:20], idx[20:]
    losses = []
    for _ in range(steps):
        model.train()
        opt.zero_grad()
        loss = crit(model(x, adj)[train_idx], y[train_idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(x, adj)[val_idx]
        acc = (out.argmax(dim=1) == y[val_idx]).float().sum() / len(val_idx)
    info = dict(x_layout=str(x.layout), adj_layout=str(adj.layout), x_sparse=x.is_sparse, nnz=adj._nnz(),
                raw_nnz=raw._nnz(), raw_dtype=str(raw.dtype), raw_coalesced=raw.is_coalesced(),
                x_dense=x.to_dense().numpy(), adj_dense=adj.to_dense().numpy(),
                adj_indices=adj.indices().numpy(), adj_values=adj.values().numpy())
    return losses, acc.item(), out.numpy(), info
"""


def test_gcn_sparse_adjacency_matches_torch():
    fg = run_on_funcgrad(GCN)
    model_f = fg["make_model"]()
    losses_f, acc_f, out_f, info_f = fg["train"](model_f)
    assert losses_f[-1] < losses_f[0]
    assert info_f["x_layout"] == info_f["adj_layout"] == "torch.sparse_coo" and info_f["x_sparse"]
    assert info_f["raw_dtype"] == "torch.int64" and info_f["raw_nnz"] == 80 and not info_f["raw_coalesced"]
    t = run_on_torch(GCN)
    model_t = t["make_model"]()
    model_f = fg["make_model"]()
    copy_weights(model_t, model_f)
    losses_t, acc_t, out_t, info_t = t["train"](model_t)
    losses_f, acc_f, out_f, info_f = fg["train"](model_f)
    for k in ("x_layout", "adj_layout", "x_sparse", "nnz", "raw_nnz", "raw_dtype", "raw_coalesced"):
        assert info_f[k] == info_t[k], k
    for k in ("x_dense", "adj_dense", "adj_indices", "adj_values"):
        close(info_f[k], info_t[k])
    close(losses_f, losses_t)
    close(out_f, out_t, atol=1e-5)
    assert acc_f == acc_t


def test_sparse_coo_api_matches_torch():
    torch = pytest.importorskip("torch")
    import funcgrad
    i = np.array([[0, 2, 0, 1], [1, 0, 1, 3]])
    for lib in (funcgrad, torch):
        a = lib.sparse_coo_tensor(i, lib.tensor([1., 2., 3., 4.]), (3, 4))
        c = a.coalesce()
        d = lib.tensor([[0, 1.5], [2, 0]], dtype=lib.float64).to_sparse()
        r = dict(nnz=a._nnz(), coalesced=(a.is_coalesced(), c.is_coalesced()), cnnz=c._nnz(),
                 ind=c.indices().tolist(), val=c.values().tolist(), dense=a.to_dense().tolist(),
                 raw=a._indices().tolist(), repr=repr(c), repr64=repr(d), layout=str(a.layout),
                 dlayout=str(a.to_dense().layout), inferred=tuple(lib.sparse_coo_tensor(i, lib.ones(4)).shape),
                 prod=(a @ lib.ones(4, 2)).tolist(), spmm=lib.spmm(a, lib.ones(4, 2)).tolist(),
                 smm=lib.sparse.mm(a, lib.ones(4, 2)).tolist(), dense_is_sparse=lib.ones(2).is_sparse,
                 sdim=(a.sparse_dim(), a.dense_dim()))
        with pytest.raises(RuntimeError, match="uncoalesced"):
            a.indices()
        with pytest.raises(RuntimeError, match="uncoalesced"):
            a.values()
        if lib is funcgrad:
            res_f = r
        else:
            res_t = r
    assert res_f == res_t


# ---------------------------------------------------------------------------------------------- GAT
GAT = """
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.0, slope=0.2):
        super().__init__()
        self.n_heads, self.concat, self.dropout = n_heads, concat, dropout
        if concat:
            self.out_features = out_features
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(slope)
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def forward(self, h, adj):
        n = h.shape[0]
        ht = F.dropout(torch.mm(h, self.W), self.dropout, training=self.training)
        ht = ht.view(n, self.n_heads, self.n_hidden).permute(1, 0, 2)
        src = torch.matmul(ht, self.a[:, :self.n_hidden, :])
        dst = torch.matmul(ht, self.a[:, self.n_hidden:, :])
        e = self.leakyrelu(src + dst.mT)
        e = torch.where(adj > 0, e, -9e16 * torch.ones_like(e))
        att = F.dropout(F.softmax(e, dim=-1), self.dropout, training=self.training)
        hp = torch.matmul(att, ht)
        if self.concat:
            return hp.permute(1, 0, 2).contiguous().view(n, self.out_features)
        return hp.mean(dim=0)

class GAT(nn.Module):
    def __init__(self, concat):
        super().__init__()
        self.gat1 = GraphAttentionLayer(6, 8, 2, concat=concat)
        self.gat2 = GraphAttentionLayer(8, 3, 1)

    def forward(self, x, adj):
        return F.log_softmax(self.gat2(F.elu(self.gat1(x, adj)), adj), dim=1)

def data():
    rng = np.random.RandomState(1)
    V = 12
    x = torch.from_numpy(rng.randn(V, 6).astype(np.float32))
    e = rng.randint(0, V, size=(30, 2))
    adj = torch.eye(V) + torch.sparse_coo_tensor(e.T, torch.ones(30), (V, V), dtype=torch.int64)
    y = torch.from_numpy(rng.randint(0, 3, V))
    return x, adj, y

def train(model, steps=3):
    x, adj, y = data()
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses, grads = [], None
    for s in range(steps):
        opt.zero_grad()
        loss = nn.NLLLoss()(model(x, adj), y)
        loss.backward()
        if grads is None:
            grads = {k: p.grad.numpy().copy() for k, p in model.named_parameters()}
        opt.step()
        losses.append(loss.item())
    return losses, grads
"""


@pytest.mark.parametrize("concat", [False, True])
def test_gat_attention_layer_matches_torch(concat):
    fg = run_on_funcgrad(GAT)
    t = run_on_torch(GAT)
    mt, mf = t["GAT"](concat), fg["GAT"](concat)
    copy_weights(mt, mf)
    lt, gt = t["train"](mt)
    lf, gf = fg["train"](mf)
    close(lf, lt)
    assert gf.keys() == gt.keys()
    for k in gt:
        close(gf[k], gt[k], rtol=1e-4, atol=1e-6)
