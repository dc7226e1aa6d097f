"""funcgrad.vision.transforms against Pillow's own operations, real torch ops and torchvision's formulas."""
import colorsys
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.vision.transforms as T
import funcgrad.vision.transforms.functional as F

torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(1234)


def _u8(h, w, c=3):
    return RNG.integers(0, 256, (h, w, c), dtype=np.uint8) if c else RNG.integers(0, 256, (h, w), dtype=np.uint8)


def _pil(a):
    return Image.fromarray(a)


def _chw(a):
    return fg.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def _hwc(t):
    return t.numpy().transpose(1, 2, 0)


# --- conversions -----------------------------------------------------------------------------------------
def test_to_tensor_pil_and_ndarray():
    a = _u8(5, 7)
    for src in (_pil(a), a):
        t = T.ToTensor()(src)
        assert isinstance(t, fg.Tensor) and t.dtype == fg.float32 and tuple(t.shape) == (3, 5, 7)
        np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    g = _u8(4, 6, 0)
    assert tuple(T.ToTensor()(_pil(g)).shape) == (1, 4, 6)
    f = RNG.random((3, 4, 2)).astype(np.float64)
    t = T.ToTensor()(f)  # non-uint8 arrays are not scaled
    assert t.dtype == fg.float64
    np.testing.assert_array_equal(t.numpy(), f.transpose(2, 0, 1))
    with pytest.raises(TypeError):
        T.ToTensor()([1, 2, 3])
    with pytest.raises(ValueError):
        T.ToTensor()(np.zeros((2, 2, 2, 2), np.uint8))


def test_pil_to_tensor_and_back():
    a = _u8(6, 5)
    t = T.PILToTensor()(_pil(a))
    assert t.dtype == fg.uint8
    np.testing.assert_array_equal(_hwc(t), a)
    back = T.ToPILImage()(t)
    assert back.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(back), a)
    # floats are multiplied by 255 and truncated (torchvision's pic.mul(255).byte())
    x = fg.tensor([[[0.5, 0.999], [0.1, 1.0]]])
    img = T.ToPILImage()(x)
    assert img.mode == "L"
    np.testing.assert_array_equal(np.asarray(img), np.array([[127, 254], [25, 255]], np.uint8))
    assert T.ToPILImage()(fg.rand(4, 3, 3)).mode == "RGBA"
    assert T.ToPILImage()(fg.rand(2, 3, 3)).mode == "LA"
    with pytest.raises(TypeError):
        T.ToPILImage()([1])
    with pytest.raises(ValueError):
        T.ToPILImage()(fg.rand(1, 1, 3, 3))


@pytest.mark.parametrize("src,dst", [(fg.uint8, fg.float32), (fg.float32, fg.uint8), (fg.uint8, fg.int32),
                                     (fg.int32, fg.uint8), (fg.float64, fg.float32)])
def test_convert_image_dtype_formula(src, dst):
    if src == fg.uint8:
        x = fg.from_numpy(_u8(4, 4))
    elif src == fg.int32:
        x = fg.from_numpy(RNG.integers(0, 2 ** 31 - 1, (3, 4), dtype=np.int32))
    else:
        x = fg.from_numpy(RNG.random((3, 4)).astype(np.float32 if src == fg.float32 else np.float64))
    out = T.ConvertImageDtype(dst)(x)
    a = x.numpy()
    assert out.dtype == dst
    if src == fg.uint8 and dst == fg.float32:
        ref = a.astype(np.float32) / 255
    elif src == fg.float32 and dst == fg.uint8:
        ref = (torch.tensor(a) * (255 + 1.0 - 1e-3)).to(torch.uint8).numpy()
    elif src == fg.uint8 and dst == fg.int32:
        ref = a.astype(np.int32) * (2 ** 31 // 256)
    elif src == fg.int32:
        ref = (a // (2 ** 31 // 256)).astype(np.uint8)
    else:
        ref = a.astype(np.float32)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(fg.rand(2, 2), fg.int32)


# --- normalize -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5)])
def test_normalize_matches_torch_and_grad(shape):
    a = RNG.random(shape).astype(np.float32)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    x = fg.tensor(a, requires_grad=True)
    out = T.Normalize(mean, std)(x)
    xt = torch.tensor(a, requires_grad=True)
    ref = (xt - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = RNG.random(shape).astype(np.float32)
    out.backward(fg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    y = fg.tensor(a)
    r = T.Normalize(mean, std, inplace=True)(y)
    assert r is y
    np.testing.assert_allclose(y.numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_normalize_errors():
    with pytest.raises(TypeError):
        F.normalize(np.zeros((3, 2, 2)), [0.0], [1.0])
    with pytest.raises(TypeError, match="float tensor"):
        F.normalize(fg.zeros(3, 2, 2, dtype=fg.uint8), [0.0], [1.0])
    with pytest.raises(ValueError, match="division by zero"):
        F.normalize(fg.zeros(3, 2, 2), [0.0] * 3, [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"\(\.\.\., C, H, W\)"):
        F.normalize(fg.zeros(2, 2), [0.0], [1.0])


# --- resize ----------------------------------------------------------------------------------------------
@given(h=st.integers(2, 24), w=st.integers(2, 24), oh=st.integers(1, 30), ow=st.integers(1, 30),
       mode=st.sampled_from(["nearest", "nearest-exact", "bilinear", "bicubic"]), aa=st.booleans())
def test_tensor_resize_matches_interpolate(h, w, oh, ow, mode, aa):
    a = np.random.default_rng(h * 31 + w).random((2, 3, h, w)).astype(np.float32)
    interp = T.InterpolationMode(mode)
    out = F.resize(fg.tensor(a), [oh, ow], interp, antialias=aa)
    kw = {"align_corners": False, "antialias": aa} if mode in ("bilinear", "bicubic") else {}
    ref = torch.nn.functional.interpolate(torch.tensor(a), size=(oh, ow), mode=mode, **kw)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=2e-6, rtol=1e-5)


def test_tensor_resize_uint8_and_grad():
    a = _u8(11, 13).transpose(2, 0, 1).copy()
    out = F.resize(fg.from_numpy(a), [5, 7], T.InterpolationMode.BILINEAR)
    ref = torch.nn.functional.interpolate(torch.tensor(a)[None].float(), size=(5, 7), mode="bilinear",
                                          antialias=True)[0].round().clamp(0, 255).to(torch.uint8)
    assert out.dtype == fg.uint8
    assert np.abs(out.numpy().astype(int) - ref.numpy().astype(int)).max() <= 1  # rounding at .5 ties
    x = fg.tensor(a.astype(np.float32), requires_grad=True)
    F.resize(x, [5, 7], antialias=True).sum().backward()
    xt = torch.tensor(a.astype(np.float32), requires_grad=True)
    torch.nn.functional.interpolate(xt[None], size=(5, 7), mode="bilinear", antialias=True).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("interp", [T.InterpolationMode.NEAREST, T.InterpolationMode.BILINEAR,
                                    T.InterpolationMode.BICUBIC, T.InterpolationMode.LANCZOS])
def test_pil_resize_is_pillow(interp):
    a = _u8(17, 23)
    out = T.Resize(9, interpolation=interp)(_pil(a))
    # smaller edge 17 -> 9, longer 23 -> int(9 * 23 / 17) = 12
    pil_mode = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC,
                "lanczos": Image.LANCZOS}[interp.value]
    np.testing.assert_array_equal(np.asarray(out), np.asarray(_pil(a).resize((12, 9), pil_mode)))


def test_resize_size_rules():
    x = fg.zeros(3, 20, 40)
    assert tuple(T.Resize(10)(x).shape) == (3, 10, 20)
    assert tuple(T.Resize((7, 9))(x).shape) == (3, 7, 9)
    assert tuple(T.Resize(10, max_size=15)(x).shape) == (3, 7, 15)
    assert tuple(T.Resize([10])(fg.zeros(3, 40, 20)).shape) == (3, 20, 10)
    assert T.Resize(20)(x) is x  # already the requested size
    with pytest.raises(ValueError, match="max_size"):
        T.Resize(10, max_size=10)(x)
    with pytest.raises(ValueError):
        F.resize(x, [4, 4], max_size=8)
    with pytest.raises(TypeError):
        T.Resize(2.5)
    with pytest.raises(ValueError):
        F.resize(x, [4, 4], T.InterpolationMode.LANCZOS)


# --- crops, flips, padding: exact on integer images ------------------------------------------------------
def test_crops_and_flips_exact():
    a = _u8(10, 13)
    p, t = _pil(a), _chw(a)
    for f, ref in [(F.hflip, a[:, ::-1]), (F.vflip, a[::-1])]:
        np.testing.assert_array_equal(np.asarray(f(p)), ref)
        np.testing.assert_array_equal(_hwc(f(t)), ref)
    np.testing.assert_array_equal(_hwc(F.crop(t, 2, 3, 4, 5)), a[2:6, 3:8])
    np.testing.assert_array_equal(np.asarray(F.crop(p, 2, 3, 4, 5)), a[2:6, 3:8])
    # out-of-bounds crop reads zeros, like Pillow's crop
    np.testing.assert_array_equal(_hwc(F.crop(t, -2, 9, 5, 6)), np.asarray(p.crop((9, -2, 15, 3))))
    # center crop: top = round((10-4)/2), left = round((13-5)/2)
    np.testing.assert_array_equal(_hwc(T.CenterCrop((4, 5))(t)), a[3:7, 4:9])
    np.testing.assert_array_equal(np.asarray(T.CenterCrop((4, 5))(p)), a[3:7, 4:9])
    big_t, big_p = T.CenterCrop((14, 15))(t), T.CenterCrop((14, 15))(p)
    np.testing.assert_array_equal(_hwc(big_t), np.asarray(big_p))
    np.testing.assert_array_equal(_hwc(big_t)[2:12, 1:14], a)


def test_five_and_ten_crop():
    a = _u8(9, 11)
    t = _chw(a)
    tl, tr, bl, br, c = T.FiveCrop((4, 5))(t)
    for got, ref in [(tl, a[:4, :5]), (tr, a[:4, 6:]), (bl, a[5:, :5]), (br, a[5:, 6:]), (c, a[2:6, 3:8])]:
        np.testing.assert_array_equal(_hwc(got), ref)
    ten = T.TenCrop(4)(_pil(a))
    assert len(ten) == 10
    np.testing.assert_array_equal(np.asarray(ten[5]), a[:, ::-1][:4, :4])
    ten_v = T.TenCrop(4, vertical_flip=True)(t)
    np.testing.assert_array_equal(_hwc(ten_v[5]), a[::-1][:4, :4])
    with pytest.raises(ValueError, match="bigger than input size"):
        F.five_crop(t, (10, 3))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("padding", [2, (1, 3), (1, 2, 3, 0)])
def test_pad_matches_numpy_and_pil(mode, padding):
    a = _u8(6, 7)
    p = F._parse_pad(padding)
    widths = ((p[1], p[3]), (p[0], p[2]), (0, 0))
    ref = np.pad(a, widths, mode=mode, **({"constant_values": 9} if mode == "constant" else {}))
    np.testing.assert_array_equal(_hwc(T.Pad(padding, fill=9, padding_mode=mode)(_chw(a))), ref)
    np.testing.assert_array_equal(np.asarray(T.Pad(padding, fill=9, padding_mode=mode)(_pil(a))), ref)
    if mode == "constant":  # Pillow's own border op
        from PIL import ImageOps
        np.testing.assert_array_equal(np.asarray(T.Pad(padding, fill=(1, 2, 3))(_pil(a))),
                                      np.asarray(ImageOps.expand(_pil(a), tuple(p), fill=(1, 2, 3))))


def test_pad_grad_and_errors():
    a = RNG.random((1, 3, 4, 5)).astype(np.float32)
    x = fg.tensor(a, requires_grad=True)
    F.pad(x, [1, 2, 3, 1], padding_mode="reflect").pow(2).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.nn.functional.pad(xt, (1, 3, 2, 1), mode="reflect").pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="Padding mode"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="3 element tuple"):
        T.Pad((1, 2, 3))
    with pytest.raises(TypeError):
        T.Pad("1")


def test_random_crop_padding_and_seeding():
    a = _u8(8, 8)
    t = _chw(a)
    fg.manual_seed(0)
    out1 = T.RandomCrop(5, padding=2, padding_mode="edge")(t)
    fg.manual_seed(0)
    out2 = T.RandomCrop(5, padding=2, padding_mode="edge")(t)
    np.testing.assert_array_equal(out1.numpy(), out2.numpy())
    # the crop is a window of the padded image
    padded = np.pad(a, ((2, 2), (2, 2), (0, 0)), mode="edge")
    o = _hwc(out1)
    assert any(np.array_equal(padded[i:i + 5, j:j + 5], o) for i in range(8) for j in range(8))
    assert tuple(T.RandomCrop((10, 12), pad_if_needed=True)(t).shape) == (3, 10, 12)
    assert T.RandomCrop((10, 12), pad_if_needed=True)(_pil(a)).size == (12, 10)
    with pytest.raises(ValueError, match="larger than input image size"):
        T.RandomCrop(9)(t)


def test_random_flips_probability():
    t = _chw(_u8(4, 5))
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(t).numpy(), t.flip(-1).numpy())
    np.testing.assert_array_equal(T.RandomVerticalFlip(1.0)(t).numpy(), t.flip(-2).numpy())
    assert T.RandomHorizontalFlip(0.0)(t) is t
    fg.manual_seed(3)
    flips = sum(not np.array_equal(T.RandomHorizontalFlip()(t).numpy(), t.numpy()) for _ in range(200))
    assert 60 < flips < 140


def test_random_resized_crop():
    fg.manual_seed(1)
    t = fg.rand(3, 32, 40)
    out = T.RandomResizedCrop(16, scale=(0.2, 1.0))(t)
    assert tuple(out.shape) == (3, 16, 16)
    for _ in range(20):
        i, j, h, w = T.RandomResizedCrop.get_params(t, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= i and i + h <= 32 and 0 <= j and j + w <= 40
        assert 0.08 * 32 * 40 * 0.8 <= h * w <= 32 * 40
    p = T.RandomResizedCrop((10, 12))(_pil(_u8(30, 20)))
    assert p.size == (12, 10)
    # impossible scale: falls back to the central crop with the ratio bound
    assert T.RandomResizedCrop.get_params(t, (2.0, 3.0), (1.0, 1.0)) == (0, 4, 32, 32)


# --- rotation / affine -----------------------------------------------------------------------------------
def _torch_warp(a, theta, ow, oh, mode):
    """torchvision's documented grid: centred output pixel coordinates through theta, normalised by the input
    size, then grid_sample(align_corners=False, zeros padding)."""
    n, c, h, w = a.shape
    xs = torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow)
    ys = torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh)
    base = torch.stack([xs[None, :].expand(oh, ow), ys[:, None].expand(oh, ow), torch.ones(oh, ow)], -1)
    th = torch.tensor(theta, dtype=torch.float32).reshape(2, 3)
    grid = (base.reshape(-1, 3) @ (th.T / torch.tensor([0.5 * w, 0.5 * h]))).reshape(1, oh, ow, 2)
    return torch.nn.functional.grid_sample(torch.tensor(a), grid.expand(n, oh, ow, 2), mode=mode,
                                           padding_mode="zeros", align_corners=False).numpy()


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("angle,expand", [(30.0, False), (-47.0, True), (90.0, True)])
def test_tensor_rotate_matches_grid_sample(mode, angle, expand):
    a = RNG.random((2, 3, 9, 12)).astype(np.float32)
    out = F.rotate(fg.tensor(a), angle, T.InterpolationMode(mode), expand=expand)
    m = F._get_inverse_affine_matrix([0.0, 0.0], -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    ow, oh = F.F_t.affine_output_size(m, 12, 9) if expand else (12, 9)
    ref = _torch_warp(a, m, ow, oh, mode)
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)


def test_rotate_90_exact_and_pil():
    a = _u8(6, 8)
    out = F.rotate(_chw(a), 90.0, expand=True)
    np.testing.assert_array_equal(_hwc(out), np.rot90(a))
    np.testing.assert_array_equal(np.asarray(F.rotate(_pil(a), 90.0, expand=True)), np.rot90(a))
    np.testing.assert_array_equal(np.asarray(F.rotate(_pil(a), 33.0, T.InterpolationMode.BILINEAR, fill=(1, 2, 3))),
                                  np.asarray(_pil(a).rotate(33.0, Image.BILINEAR, fillcolor=(1, 2, 3))))


def test_affine_matrix_and_pil():
    a = _u8(10, 12)
    m = F._get_inverse_affine_matrix([6.0, 5.0], 20.0, [1, -2], 1.2, [10.0, 5.0])
    fwd = F._get_inverse_affine_matrix([6.0, 5.0], 20.0, [1, -2], 1.2, [10.0, 5.0], inverted=False)
    M = np.vstack([np.reshape(m, (2, 3)), [0, 0, 1]])
    Mf = np.vstack([np.reshape(fwd, (2, 3)), [0, 0, 1]])
    np.testing.assert_allclose(M @ Mf, np.eye(3), atol=1e-12)
    out = F.affine(_pil(a), 20.0, [1, -2], 1.2, [10.0, 5.0])
    np.testing.assert_array_equal(np.asarray(out), np.asarray(_pil(a).transform((12, 10), Image.AFFINE, tuple(m),
                                                                                 Image.NEAREST)))
    # tensor affine: translation by whole pixels is an exact shift
    t = F.affine(_chw(a), 0.0, [2, 1], 1.0, 0.0)
    ref = np.zeros_like(a)
    ref[1:, 2:] = a[:-1, :-2]
    np.testing.assert_array_equal(_hwc(t), ref)
    t = F.affine(_chw(a), 0.0, [2, 1], 1.0, 0.0, fill=[7.0])
    assert (_hwc(t)[0] == 7).all() and (_hwc(t)[:, :2] == 7).all()
    with pytest.raises(ValueError, match="scale"):
        F.affine(_chw(a), 0.0, [0, 0], 0.0, 0.0)


def test_random_rotation_affine_seeded():
    t = fg.rand(3, 10, 10)
    fg.manual_seed(5)
    angle = T.RandomRotation.get_params([-30.0, 30.0])
    fg.manual_seed(5)
    out = T.RandomRotation(30)(t)
    np.testing.assert_allclose(out.numpy(), F.rotate(t, angle, fill=[0.0, 0.0, 0.0]).numpy())
    assert -30 <= angle <= 30
    fg.manual_seed(2)
    params = T.RandomAffine.get_params([-10.0, 10.0], (0.2, 0.1), (0.8, 1.2), [-5.0, 5.0, -3.0, 3.0], [10, 10])
    assert abs(params[1][0]) <= 2 and abs(params[1][1]) <= 1 and 0.8 <= params[2] <= 1.2
    assert T.RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5)(_pil(_u8(10, 10))).size == (10, 10)
    with pytest.raises(ValueError):
        T.RandomAffine(10, translate=(2.0, 0.1))
    with pytest.raises(ValueError):
        T.RandomRotation(-5)


# --- colour ----------------------------------------------------------------------------------------------
def _blend_ref(img, other, ratio):
    bound = 1.0 if img.is_floating_point() else 255.0
    return (ratio * img + (1.0 - ratio) * other).clamp(0, bound).to(img.dtype)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_tensor_color_formulas(dtype):
    a = _u8(6, 7).transpose(2, 0, 1).copy()
    if dtype == "float32":
        a = (a / 255.0).astype(np.float32)
    ta, x = torch.tensor(a), fg.tensor(a)
    gray_t = (0.2989 * ta[0] + 0.587 * ta[1] + 0.114 * ta[2]).to(ta.dtype)[None]
    np.testing.assert_array_equal(F.rgb_to_grayscale(x).numpy(), gray_t.numpy())
    assert tuple(T.Grayscale(3)(x).shape) == (3, 6, 7)
    for f in (0.0, 0.6, 1.7):
        np.testing.assert_allclose(F.adjust_brightness(x, f).numpy(),
                                   _blend_ref(ta, torch.zeros_like(ta), f).numpy(), atol=1e-6)
        mean = gray_t.float().mean(dim=(-3, -2, -1), keepdim=True)
        np.testing.assert_allclose(F.adjust_contrast(x, f).numpy(), _blend_ref(ta, mean, f).numpy(), atol=1e-6)
        np.testing.assert_allclose(F.adjust_saturation(x, f).numpy(), _blend_ref(ta, gray_t, f).numpy(),
                                   atol=1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        F.adjust_brightness(x, -1.0)


@pytest.mark.parametrize("hue", [-0.4, -0.1, 0.0, 0.25, 0.5])
def test_tensor_adjust_hue_against_colorsys(hue):
    a = RNG.random((3, 5, 6)).astype(np.float32)
    a[:, 0, 0] = 0.5  # a grey pixel
    out = F.adjust_hue(fg.tensor(a), hue).numpy()
    ref = np.empty_like(a)
    for i in range(5):
        for j in range(6):
            h, s, v = colorsys.rgb_to_hsv(*a[:, i, j])
            ref[:, i, j] = colorsys.hsv_to_rgb((h + hue) % 1.0, s, v)
    np.testing.assert_allclose(out, ref, atol=1e-5)
    with pytest.raises(ValueError):
        F.adjust_hue(fg.tensor(a), 0.6)


def test_pil_color_is_pillow():
    from PIL import ImageEnhance
    p = _pil(_u8(6, 7))
    np.testing.assert_array_equal(np.asarray(F.adjust_brightness(p, 1.3)),
                                  np.asarray(ImageEnhance.Brightness(p).enhance(1.3)))
    np.testing.assert_array_equal(np.asarray(F.adjust_contrast(p, 0.4)),
                                  np.asarray(ImageEnhance.Contrast(p).enhance(0.4)))
    np.testing.assert_array_equal(np.asarray(F.adjust_saturation(p, 0.2)),
                                  np.asarray(ImageEnhance.Color(p).enhance(0.2)))
    np.testing.assert_array_equal(np.asarray(T.Grayscale()(p)), np.asarray(p.convert("L")))
    g3 = np.asarray(T.Grayscale(3)(p))
    assert g3.shape == (6, 7, 3) and (g3 == np.asarray(p.convert("L"))[..., None]).all()
    hsv = np.asarray(p.convert("HSV")).copy()
    hsv[..., 0] = (hsv[..., 0].astype(int) + int(0.2 * 255)) % 256
    np.testing.assert_array_equal(np.asarray(F.adjust_hue(p, 0.2)),
                                  np.asarray(Image.fromarray(hsv, "HSV").convert("RGB")))


def test_color_jitter_seeded_and_ranges():
    x = fg.rand(3, 5, 5)
    cj = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3, hue=0.1)
    assert cj.brightness == (0.6, 1.4) and cj.contrast == (0.5, 1.5) and cj.hue == (-0.1, 0.1)
    fg.manual_seed(9)
    order, b, c, s, h = T.ColorJitter.get_params(cj.brightness, cj.contrast, cj.saturation, cj.hue)
    ref = x
    for i in order.tolist():
        ref = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue][i](ref, [b, c, s, h][i])
    fg.manual_seed(9)
    np.testing.assert_allclose(cj(x).numpy(), ref.numpy())
    assert T.ColorJitter().brightness is None
    with pytest.raises(ValueError):
        T.ColorJitter(hue=0.7)
    with pytest.raises(ValueError):
        T.ColorJitter(brightness=-1)
    assert T.ColorJitter(0.2, 0.2, 0.2, 0.05)(_pil(_u8(5, 5))).size == (5, 5)


def test_random_grayscale():
    x = fg.rand(3, 4, 4)
    out = T.RandomGrayscale(p=1.0)(x)
    assert tuple(out.shape) == (3, 4, 4)
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(F.rgb_to_grayscale(x).numpy(), (3, 4, 4)))
    assert T.RandomGrayscale(p=0.0)(x) is x


# --- blur / erasing --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ks,sigma", [((3, 3), (1.0, 1.0)), ((5, 3), (1.5, 0.7))])
def test_gaussian_blur_formula(ks, sigma):
    a = RNG.random((2, 3, 8, 9)).astype(np.float32)
    out = F.gaussian_blur(fg.tensor(a), list(ks), list(sigma))

    def k1(k, s):
        x = torch.linspace(-(k - 1) / 2, (k - 1) / 2, k)
        p = torch.exp(-0.5 * (x / s) ** 2)
        return p / p.sum()
    k2 = torch.outer(k1(ks[1], sigma[1]), k1(ks[0], sigma[0]))
    xt = torch.nn.functional.pad(torch.tensor(a), (ks[0] // 2, ks[0] // 2, ks[1] // 2, ks[1] // 2), mode="reflect")
    ref = torch.nn.functional.conv2d(xt, k2.expand(3, 1, *k2.shape), groups=3)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-6)
    p = _pil(_u8(8, 9))
    bp = F.gaussian_blur(p, 3, 1.0)
    bt = F.gaussian_blur(F.pil_to_tensor(p), 3, 1.0)
    assert isinstance(bp, Image.Image) and bp.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(bp), _hwc(bt))
    with pytest.raises(ValueError, match="odd and positive"):
        F.gaussian_blur(fg.tensor(a), [4, 3])
    with pytest.raises(ValueError):
        T.GaussianBlur(3, sigma=(2.0, 1.0))


def test_gaussian_blur_transform_seeded():
    x = fg.rand(3, 8, 8)
    fg.manual_seed(4)
    s = T.GaussianBlur.get_params(0.1, 2.0)
    fg.manual_seed(4)
    np.testing.assert_allclose(T.GaussianBlur(5)(x).numpy(), F.gaussian_blur(x, [5, 5], [s, s]).numpy())


def test_erase_and_random_erasing():
    x = fg.rand(3, 10, 12)
    out = F.erase(x, 2, 3, 4, 5, fg.tensor(0.5))
    ref = x.numpy().copy()
    ref[:, 2:6, 3:8] = 0.5
    np.testing.assert_array_equal(out.numpy(), ref)
    assert not np.array_equal(x.numpy(), ref)  # not in place by default
    fg.manual_seed(0)
    e = T.RandomErasing(p=1.0, value=(0.1, 0.2, 0.3))(x)
    diff = (e.numpy() != x.numpy()).any(0)
    rows, cols = np.nonzero(diff)
    assert diff[rows.min():rows.max() + 1, cols.min():cols.max() + 1].all()
    np.testing.assert_allclose(e.numpy()[:, rows[0], cols[0]], [0.1, 0.2, 0.3], rtol=1e-6)
    assert tuple(T.RandomErasing(p=1.0, value="random")(x).shape) == (3, 10, 12)
    with pytest.raises(ValueError, match="number of input channels"):
        T.RandomErasing(p=1.0, value=(1, 2))(x)
    with pytest.raises(ValueError):
        T.RandomErasing(value="noise")
    with pytest.raises(TypeError):
        F.erase(np.zeros((3, 2, 2)), 0, 0, 1, 1, 0)


# --- containers ------------------------------------------------------------------------------------------
def test_compose_lambda_random_apply_choice_order():
    import random
    pipeline = T.Compose([T.ToTensor(), T.Lambda(lambda t: t * 2), T.CenterCrop(2)])
    out = pipeline(_pil(_u8(4, 4)))
    assert tuple(out.shape) == (3, 2, 2) and float(out.max()) <= 2.0
    assert "Compose(" in repr(pipeline) and "CenterCrop(size=(2, 2))" in repr(pipeline)
    with pytest.raises(TypeError, match="callable"):
        T.Lambda(3)
    x = fg.ones(1, 2, 2)
    assert float(T.RandomApply([T.Lambda(lambda t: t + 1)], p=1.0)(x).sum()) == 8.0
    assert T.RandomApply([T.Lambda(lambda t: t + 1)], p=0.0)(x) is x
    random.seed(0)
    outs = {float(T.RandomChoice([T.Lambda(lambda t: t * 2), T.Lambda(lambda t: t * 3)])(x).sum())
            for _ in range(20)}
    assert outs == {8.0, 12.0}
    assert float(T.RandomChoice([T.Lambda(lambda t: t * 2), T.Lambda(lambda t: t * 3)], p=[0, 1])(x).sum()) == 12
    random.seed(1)
    outs = {float(T.RandomOrder([T.Lambda(lambda t: t + 1), T.Lambda(lambda t: t * 2)])(x).sum())
            for _ in range(20)}
    assert outs == {16.0, 12.0}


def test_batched_tensor_transforms():
    x = fg.rand(4, 3, 12, 10)
    for t in (T.Resize((6, 5)), T.CenterCrop(5), T.RandomHorizontalFlip(1.0), T.Pad(2), T.RandomRotation(15),
              T.ColorJitter(0.3, 0.3, 0.3, 0.1), T.GaussianBlur(3), T.RandomErasing(1.0)):
        out = t(x)
        assert out.ndim == 4 and out.shape[:2] == (4, 3)


def test_transform_grad_flows():
    a = RNG.random((3, 8, 8)).astype(np.float32)
    x = fg.tensor(a, requires_grad=True)
    y = T.Compose([T.Resize(5), T.Pad(1, padding_mode="symmetric"), T.Normalize([0.5] * 3, [0.2] * 3)])(x)
    y.sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.nn.functional.interpolate(xt[None], size=(5, 5), mode="bilinear", antialias=True)[0]
    yt = torch.cat([yt[:, :1], yt, yt[:, -1:]], 1)
    yt = torch.cat([yt[:, :, :1], yt, yt[:, :, -1:]], 2)
    ((yt - 0.5) / 0.2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


# --- posterize / solarize / autocontrast / equalize / invert / sharpness ----------------------------------
from PIL import ImageEnhance, ImageOps  # noqa: E402

_PIL_OPS = {
    "posterize": (lambda i: ImageOps.posterize(i, 3), lambda x: F.posterize(x, 3)),
    "posterize1": (lambda i: ImageOps.posterize(i, 1), lambda x: F.posterize(x, 1)),
    "posterize8": (lambda i: ImageOps.posterize(i, 8), lambda x: F.posterize(x, 8)),
    "solarize": (lambda i: ImageOps.solarize(i, 100), lambda x: F.solarize(x, 100)),
    "equalize": (ImageOps.equalize, F.equalize),
    "invert": (ImageOps.invert, F.invert),
    "sharpness": (lambda i: ImageEnhance.Sharpness(i).enhance(1.7), lambda x: F.adjust_sharpness(x, 1.7)),
    "sharpness0": (lambda i: ImageEnhance.Sharpness(i).enhance(0.0), lambda x: F.adjust_sharpness(x, 0.0)),
    "sharpness3": (lambda i: ImageEnhance.Sharpness(i).enhance(3.0), lambda x: F.adjust_sharpness(x, 3.0)),
}


def _narrow_range(h, w, c):
    """A uint8 image whose channels use different sub-ranges (so autocontrast / equalize do something)."""
    a = _u8(h, w, c).astype(np.int64)
    lo = RNG.integers(0, 100, c if c else 1)
    return (lo + a * RNG.integers(20, 150, c if c else 1) // 255).astype(np.uint8)


@pytest.mark.parametrize("op", sorted(_PIL_OPS))
@pytest.mark.parametrize("h,w,c", [(9, 11, 3), (24, 20, 0), (18, 17, 3)])
def test_colour_ops_pil_and_uint8_tensor_equal_pillow(op, h, w, c):
    pil_fn, fn = _PIL_OPS[op]
    a = _narrow_range(h, w, c)
    ref = np.asarray(pil_fn(_pil(a)))
    np.testing.assert_array_equal(np.asarray(fn(_pil(a))), ref)
    t = fg.from_numpy(a[None] if c == 0 else np.ascontiguousarray(a.transpose(2, 0, 1)))
    out = fn(t)
    assert out.dtype == fg.uint8
    got = out.numpy()[0] if c == 0 else _hwc(out)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("op", ["posterize", "solarize", "equalize", "invert", "sharpness"])
def test_colour_ops_batched_equal_per_image(op):
    fn = _PIL_OPS[op][1]
    imgs = [_narrow_range(16, 18, 3) for _ in range(4)]
    imgs[1][..., 0] = 77  # a constant channel
    x = fg.from_numpy(np.stack([a.transpose(2, 0, 1) for a in imgs]).reshape(2, 2, 3, 16, 18).copy())
    out = fn(x).numpy().reshape(4, 3, 16, 18)
    for i, a in enumerate(imgs):
        np.testing.assert_array_equal(out[i], _hwc(fn(_chw(a))).transpose(2, 0, 1))
        np.testing.assert_array_equal(out[i], np.asarray(_PIL_OPS[op][0](_pil(a))).transpose(2, 0, 1))


@pytest.mark.parametrize("shape", [(3, 9, 11), (2, 1, 24, 20), (2, 2, 3, 5, 6)])
def test_uint8_autocontrast_and_posterize(shape):
    """autocontrast: torchvision's float32 formula exactly, Pillow's float64 lookup table to within 1."""
    a = RNG.integers(30, 180, shape).astype(np.uint8)
    a[..., 0, 0] = 90  # some channels constant below
    a[..., :1, :, :] = 90 if shape[-3] == 3 else a[..., :1, :, :]
    tt = torch.tensor(a)
    lo = tt.amin((-2, -1), keepdim=True).float()
    hi = tt.amax((-2, -1), keepdim=True).float()
    scale = 255.0 / (hi - lo)
    bad = ~torch.isfinite(scale)
    lo[bad], scale[bad] = 0, 1
    ref = ((tt - lo) * scale).clamp(0, 255).to(torch.uint8).numpy()
    got = F.autocontrast(fg.from_numpy(a)).numpy()
    np.testing.assert_array_equal(got, ref)
    planes = a.reshape(-1, *shape[-2:])
    pil = np.stack([np.asarray(ImageOps.autocontrast(_pil(p))) for p in planes]).reshape(shape)
    assert np.abs(got.astype(int) - pil).max() <= 1
    for bits in range(9):
        mask = (0xFF << (8 - bits)) & 0xFF
        np.testing.assert_array_equal(F.posterize(fg.from_numpy(a), bits).numpy(), a & mask)


def test_equalize_edge_cases_against_pillow():
    for a in (np.full((5, 5), 9, np.uint8), np.where(np.eye(6, dtype=bool), 200, 3).astype(np.uint8),
              np.zeros((4, 4), np.uint8), _u8(40, 40, 0)):
        got = F.equalize(fg.from_numpy(a[None].copy())).numpy()[0]
        np.testing.assert_array_equal(got, np.asarray(ImageOps.equalize(_pil(a))))


def _torch_blend(img, other, ratio, bound):
    return (ratio * img + (1.0 - ratio) * other).clamp(0, bound)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 7, 9), (2, 1, 5, 4)])
def test_float_colour_ops_formulas_and_grads(dtype, shape):
    """torchvision's documented tensor formulas, written in torch, forward and backward."""
    a = RNG.random(shape).astype(dtype)
    a[..., 0, 0] = 0.2  # autocontrast: min / max per channel
    tt = torch.tensor(a, requires_grad=True)
    x = fg.tensor(a, requires_grad=True)
    # sharpness: 3x3 smoothing (centre weight 5, sum 13) inside a one-pixel border of the original
    k = torch.ones(3, 3, dtype=tt.dtype)
    k[1, 1] = 5.0
    k = (k / k.sum()).expand(shape[-3], 1, 3, 3)
    flat = tt.reshape(-1, *shape[-3:])
    blur = flat.clone()
    blur[..., 1:-1, 1:-1] = torch.nn.functional.conv2d(flat, k, groups=shape[-3])
    ref_sharp = _torch_blend(tt, blur.reshape(shape), 1.8, 1.0)
    lo = tt.amin((-2, -1), keepdim=True)
    hi = tt.amax((-2, -1), keepdim=True)
    ref_ac = ((tt - lo) / (hi - lo)).clamp(0, 1)
    ref_sol = torch.where(tt >= 0.4, 1.0 - tt, tt)
    (ref_sharp.sum() + (ref_ac * ref_ac).sum() + (ref_sol * tt).sum()).backward()
    sharp, ac, sol = F.adjust_sharpness(x, 1.8), F.autocontrast(x), F.solarize(x, 0.4)
    (sharp.sum() + (ac * ac).sum() + (sol * x).sum()).backward()
    tol = 1e-5 if dtype == "float32" else 1e-10
    for got, ref in ((sharp, ref_sharp), (ac, ref_ac), (sol, ref_sol), (F.invert(x), 1.0 - tt)):
        assert got.dtype == x.dtype
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_autocontrast_constant_channel_and_small_sharpness():
    a = np.full((3, 4, 4), 0.3, np.float32)
    a[1] = RNG.random((4, 4))
    out = F.autocontrast(fg.tensor(a)).numpy()
    np.testing.assert_array_equal(out[0], a[0])
    assert out[1].min() == 0.0 and abs(out[1].max() - 1.0) < 1e-6
    tiny = fg.rand(3, 2, 5)
    assert F.adjust_sharpness(tiny, 2.0) is tiny


def test_colour_op_errors():
    f = fg.rand(3, 4, 4)
    u = fg.zeros(3, 4, 4, dtype=fg.uint8)
    with pytest.raises(ValueError, match="bits"):
        F.posterize(u, 9)
    with pytest.raises(TypeError, match="uint8"):
        F.posterize(f, 3)
    with pytest.raises(TypeError, match="uint8"):
        F.equalize(f)
    with pytest.raises(TypeError, match="Threshold"):
        F.solarize(f, 1.5)
    with pytest.raises(ValueError, match="sharpness_factor"):
        F.adjust_sharpness(f, -0.1)
    with pytest.raises(TypeError, match="at least 3 dimensions"):
        F.invert(fg.rand(4, 4))
    with pytest.raises(TypeError, match="channel values"):
        F.autocontrast(fg.rand(4, 4, 4))
    with pytest.raises(TypeError, match="PIL Image"):
        F.posterize(np.zeros((3, 3), np.uint8), 2)


# --- perspective ---------------------------------------------------------------------------------------
_START = [[0, 0], [11, 0], [11, 8], [0, 8]]
_ENDS = [[[1, 2], [9, 0], [11, 7], [2, 8]], [[3, 1], [10, 2], [8, 6], [0, 7]], [[0, 0], [11, 0], [11, 8], [0, 8]]]


def _homography(c, x, y):
    d = c[6] * x + c[7] * y + 1
    return (c[0] * x + c[1] * y + c[2]) / d, (c[3] * x + c[4] * y + c[5]) / d


@pytest.mark.parametrize("end", _ENDS)
def test_perspective_coeffs_map_endpoints_to_startpoints(end):
    c = F._get_perspective_coeffs(_START, end)
    assert len(c) == 8 and all(isinstance(v, float) for v in c)
    for (sx, sy), (ex, ey) in zip(_START, end):
        x, y = _homography(c, ex, ey)
        assert abs(x - sx) < 1e-4 and abs(y - sy) < 1e-4


def _torch_perspective(a, coeffs, mode, fill):
    """torchvision's documented perspective grid (pixel centres through the homography, normalised by the
    image size) and grid_sample with the ones-channel fill mask."""
    n, c, h, w = a.shape
    co = torch.tensor(coeffs, dtype=torch.float32)
    ys, xs = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
    d = co[6] * xs + co[7] * ys + 1.0
    gx = (co[0] * xs + co[1] * ys + co[2]) / d / (0.5 * w) - 1.0
    gy = (co[3] * xs + co[4] * ys + co[5]) / d / (0.5 * h) - 1.0
    grid = torch.stack([gx, gy], -1)[None].expand(n, h, w, 2)
    x = torch.tensor(a)
    if fill is not None:
        x = torch.cat([x, torch.ones(n, 1, h, w, dtype=x.dtype)], 1)
    out = torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        out, m = out[:, :-1], out[:, -1:].expand(n, c, h, w)
        f = torch.tensor(fill, dtype=out.dtype).view(1, -1, 1, 1).expand_as(out)
        out = torch.where(m < 0.5, f, out) if mode == "nearest" else out * m + (1.0 - m) * f
    return out


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill", [None, [0.5], [0.1, 0.2, 0.3]])
@pytest.mark.parametrize("end", _ENDS[:2])
def test_tensor_perspective_matches_grid_sample(mode, fill, end):
    a = RNG.random((2, 3, 9, 12)).astype(np.float32)
    x = fg.tensor(a, requires_grad=True)
    out = F.perspective(x, _START, end, T.InterpolationMode(mode), fill=fill)
    ref_in = torch.tensor(a, requires_grad=True)
    c = F._get_perspective_coeffs(_START, end)
    ref = _torch_perspective(ref_in.detach().numpy(), c, mode, fill)
    np.testing.assert_allclose(out.detach().numpy(), ref.numpy(), atol=1e-5)
    if mode == "bilinear" and fill is None:
        ref_in2 = torch.tensor(a, requires_grad=True)
        x2 = ref_in2
        co = torch.tensor(c)
        h, w = 9, 12
        ys, xs = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
        d = co[6] * xs + co[7] * ys + 1.0
        grid = torch.stack([(co[0] * xs + co[1] * ys + co[2]) / d / (0.5 * w) - 1.0,
                            (co[3] * xs + co[4] * ys + co[5]) / d / (0.5 * h) - 1.0], -1)[None].expand(2, h, w, 2)
        torch.nn.functional.grid_sample(x2, grid, align_corners=False).pow(2).sum().backward()
        out.pow(2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), ref_in2.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_perspective_uint8_and_pil():
    a = _u8(9, 12)
    end = _ENDS[0]
    coeffs = F._get_perspective_coeffs(_START, end)
    # PIL path is Pillow's PERSPECTIVE transform, fill included
    for interp, res in ((T.InterpolationMode.NEAREST, Image.Resampling.NEAREST),
                        (T.InterpolationMode.BILINEAR, Image.Resampling.BILINEAR)):
        got = F.perspective(_pil(a), _START, end, interp, fill=[10, 20, 30])
        ref = _pil(a).transform((12, 9), Image.PERSPECTIVE, coeffs, res, fillcolor=(10, 20, 30))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    # uint8 tensor: nearest picks the same pixels as Pillow; bilinear is grid_sample rounded
    # (to within float rounding of source coordinates that land on a pixel boundary: at most 2 pixels differ)
    nearest = _hwc(F.perspective(_chw(a), _START, end, T.InterpolationMode.NEAREST, fill=[10, 20, 30]))
    ref = _pil(a).transform((12, 9), Image.PERSPECTIVE, coeffs, Image.Resampling.NEAREST, fillcolor=(10, 20, 30))
    assert (nearest != np.asarray(ref)).any(-1).sum() <= 2
    bil = F.perspective(_chw(a), _START, end)
    assert bil.dtype == fg.uint8
    ref = _torch_perspective(a.transpose(2, 0, 1)[None].astype(np.float32), coeffs, "bilinear", None)
    np.testing.assert_array_equal(bil.numpy(), ref.round().to(torch.uint8)[0].numpy())


def test_perspective_errors():
    x = fg.rand(3, 5, 5)
    with pytest.raises(ValueError, match="four corners"):
        F.perspective(x, _START[:3], _ENDS[0][:3])
    with pytest.raises(ValueError, match="unsupported"):
        F.perspective(x, _START, _ENDS[0], T.InterpolationMode.BICUBIC)


# --- random transforms -----------------------------------------------------------------------------------
def test_random_perspective_params_and_seeding():
    for _ in range(20):
        start, end = T.RandomPerspective.get_params(20, 10, 0.6)
        assert start == [[0, 0], [19, 0], [19, 9], [0, 9]]
        (tlx, tly), (trx, try_), (brx, bry), (blx, bly) = end
        assert 0 <= tlx <= 6 and 0 <= tly <= 3 and 13 <= trx <= 19 and 0 <= try_ <= 3
        assert 13 <= brx <= 19 and 6 <= bry <= 9 and 0 <= blx <= 6 and 6 <= bly <= 9
    x = fg.rand(3, 10, 20)
    t = T.RandomPerspective(0.6, p=1.0)
    fg.manual_seed(5)
    y1 = t(x)
    fg.manual_seed(5)
    y2 = t(x)
    np.testing.assert_array_equal(y1.numpy(), y2.numpy())
    assert not np.array_equal(y1.numpy(), x.numpy())
    assert T.RandomPerspective(p=0.0)(x) is x
    pil = _pil(_u8(10, 20))
    assert T.RandomPerspective(p=1.0, fill=3)(pil).size == (20, 10)
    assert repr(T.RandomPerspective(p=0.3)) == "RandomPerspective(p=0.3)"


@pytest.mark.parametrize("cls,args,fn", [
    (T.RandomPosterize, (3,), lambda x: F.posterize(x, 3)),
    (T.RandomSolarize, (128,), lambda x: F.solarize(x, 128)),
    (T.RandomAdjustSharpness, (2.0,), lambda x: F.adjust_sharpness(x, 2.0)),
    (T.RandomAutocontrast, (), F.autocontrast),
    (T.RandomEqualize, (), F.equalize),
    (T.RandomInvert, (), F.invert)])
def test_random_colour_transforms(cls, args, fn):
    x = _chw(_narrow_range(18, 19, 3))
    assert not np.array_equal(fn(x).numpy(), x.numpy())
    np.testing.assert_array_equal(cls(*args, p=1.0)(x).numpy(), fn(x).numpy())
    assert cls(*args, p=0.0)(x) is x
    fg.manual_seed(0)
    hits = sum(not np.array_equal(cls(*args)(x).numpy(), x.numpy()) for _ in range(60))
    fg.manual_seed(0)
    again = sum(not np.array_equal(cls(*args)(x).numpy(), x.numpy()) for _ in range(60))
    assert 15 < hits < 45 and hits == again


def test_new_reprs_and_v2_alias():
    import funcgrad.vision.transforms.v2 as v2
    import funcgrad.vision.transforms.v2.functional as F2
    assert repr(T.RandomPosterize(2, 0.3)) == "RandomPosterize(bits=2,p=0.3)"
    assert repr(T.RandomSolarize(0.5)) == "RandomSolarize(threshold=0.5,p=0.5)"
    assert repr(T.RandomAdjustSharpness(2)) == "RandomAdjustSharpness(sharpness_factor=2,p=0.5)"
    assert repr(T.RandomEqualize()) == "RandomEqualize(p=0.5)"
    for name in ("Compose", "RandomPerspective", "RandomEqualize", "Resize", "Normalize", "InterpolationMode"):
        assert getattr(v2, name) is getattr(T, name)
    assert F2.perspective is F.perspective and v2.functional.equalize is F.equalize


def test_tensor_resize_and_pad_keep_leading_dims():
    x = fg.rand(2, 2, 3, 6, 7)
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        out = F.resize(x, [4, 9], T.InterpolationMode(mode), antialias=False)
        ref = torch.nn.functional.interpolate(torch.tensor(x.numpy()).reshape(12, 1, 6, 7), size=(4, 9), mode=mode)
        np.testing.assert_allclose(out.numpy(), ref.reshape(2, 2, 3, 4, 9).numpy(), atol=1e-5)
    g = fg.from_numpy(_u8(5, 6, 0))
    assert tuple(F.resize(g, [3, 4], T.InterpolationMode.NEAREST).shape) == (3, 4)
    for mode, tmode in (("edge", "replicate"), ("reflect", "reflect")):
        out = F.pad(x, [1, 2, 3, 1], padding_mode=mode)
        ref = torch.nn.functional.pad(torch.tensor(x.numpy()).reshape(12, 6, 7), (1, 3, 2, 1), mode=tmode)
        np.testing.assert_array_equal(out.numpy(), ref.reshape(2, 2, 3, 9, 11).numpy())
    b = fg.ones(1, 3, 3, dtype=fg.bool)
    assert F.pad(b, 1).numpy().sum() == 9 and F.pad(b, 1).dtype == fg.bool
