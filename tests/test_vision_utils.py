"""funcgrad.vision.utils (make_grid / save_image layouts, drawing) and funcgrad.vision.io (via Pillow)."""
import math

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.vision import io as vio
from funcgrad.vision.utils import draw_bounding_boxes, draw_segmentation_masks, make_grid, save_image

torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(3)


def _grid_ref(a, nrow, padding, pad_value):
    """torchvision's documented layout: xmaps = min(nrow, B) columns, ceil(B / xmaps) rows, each cell
    (H + padding) x (W + padding), image k at row k // xmaps, col k % xmaps, offset by padding."""
    b, c, h, w = a.shape
    xm = min(nrow, b)
    ym = int(math.ceil(b / xm))
    g = np.full((c, ym * (h + padding) + padding, xm * (w + padding) + padding), pad_value, a.dtype)
    for k in range(b):
        y, x = divmod(k, xm)
        g[:, y * (h + padding) + padding: y * (h + padding) + padding + h,
          x * (w + padding) + padding: x * (w + padding) + padding + w] = a[k]
    return g


@pytest.mark.parametrize("b,nrow,padding,pad_value", [(5, 2, 2, 0.0), (8, 8, 0, 0.5), (7, 3, 1, 1.0), (2, 8, 3, 0.2)])
def test_make_grid_layout(b, nrow, padding, pad_value):
    a = RNG.random((b, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(make_grid(fg.tensor(a), nrow=nrow, padding=padding, pad_value=pad_value).numpy(),
                                  _grid_ref(a, nrow, padding, pad_value))


def test_make_grid_gray_list_single_and_normalize():
    a = RNG.random((3, 1, 4, 4)).astype(np.float32) * 4 - 1
    g = make_grid(fg.tensor(a), nrow=2)
    assert tuple(g.shape) == (3, 2 * 6 + 2, 2 * 6 + 2)
    np.testing.assert_array_equal(g.numpy(), _grid_ref(np.repeat(a, 3, 1), 2, 2, 0.0))
    lst = make_grid([fg.tensor(a[0]), fg.tensor(a[1])], padding=1)
    assert tuple(lst.shape) == (3, 6, 11)
    single = make_grid(fg.tensor(a[:1]))
    assert tuple(single.shape) == (3, 4, 4)  # one image: no padding
    n = make_grid(fg.tensor(a), normalize=True, padding=0).numpy()
    ref = (np.repeat(a, 3, 1) - a.min()) / (a.max() - a.min())
    np.testing.assert_allclose(n, _grid_ref(ref, 8, 0, 0.0), rtol=1e-6, atol=1e-7)
    r = make_grid(fg.tensor(a), normalize=True, value_range=(0.0, 2.0), padding=0).numpy()
    np.testing.assert_allclose(r, _grid_ref(np.clip(np.repeat(a, 3, 1), 0, 2) / 2, 8, 0, 0.0), rtol=1e-6)
    e = make_grid(fg.tensor(a), normalize=True, scale_each=True, padding=0).numpy()
    per = np.stack([(x - x.min()) / (x.max() - x.min()) for x in np.repeat(a, 3, 1)])
    np.testing.assert_allclose(e, _grid_ref(per, 8, 0, 0.0), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        make_grid(np.zeros((2, 3, 4, 4)))


def test_make_grid_grad():
    a = RNG.random((3, 3, 2, 2)).astype(np.float32)
    x = fg.tensor(a, requires_grad=True)
    (make_grid(x, nrow=2) * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(a.shape, 2, np.float32))


def test_save_image(tmp_path):
    a = RNG.random((4, 3, 5, 6)).astype(np.float32)
    save_image(fg.tensor(a), str(tmp_path / "g.png"), nrow=2, padding=1)
    got = np.asarray(Image.open(tmp_path / "g.png"))
    ref = np.clip(_grid_ref(a, 2, 1, 0.0) * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(got, ref)
    save_image(fg.tensor(a[0]), str(tmp_path / "one.jpg"))
    assert Image.open(tmp_path / "one.jpg").size == (6, 5)


def test_draw_bounding_boxes():
    img = fg.zeros(3, 20, 30, dtype=fg.uint8)
    boxes = fg.tensor([[2, 3, 10, 12], [15, 1, 28, 18]], dtype=fg.float32)
    out = draw_bounding_boxes(img, boxes, colors=["red", (0, 255, 0)], width=1)
    o = out.numpy()
    assert out.dtype == fg.uint8 and tuple(out.shape) == (3, 20, 30)
    np.testing.assert_array_equal(o[:, 3, 2:11].T, np.tile([255, 0, 0], (9, 1)))  # top edge of box 1
    np.testing.assert_array_equal(o[:, 1:19, 28].T, np.tile([0, 255, 0], (18, 1)))  # right edge of box 2
    assert (o[:, 5:10, 4:8] == 0).all()  # interior untouched
    # same as drawing with Pillow directly
    from PIL import ImageDraw
    ref = Image.new("RGB", (30, 20))
    d = ImageDraw.Draw(ref)
    d.rectangle([2, 3, 10, 12], outline=(255, 0, 0), width=1)
    d.rectangle([15, 1, 28, 18], outline=(0, 255, 0), width=1)
    np.testing.assert_array_equal(o.transpose(1, 2, 0), np.asarray(ref))
    lab = draw_bounding_boxes(img, boxes, labels=["a", "b"], fill=True)
    assert tuple(lab.shape) == (3, 20, 30)
    with pytest.raises(ValueError, match="xmin, ymin, xmax, ymax"):
        draw_bounding_boxes(img, fg.tensor([[5.0, 5.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match="batches"):
        draw_bounding_boxes(fg.zeros(1, 3, 4, 4, dtype=fg.uint8), boxes)
    with pytest.raises(TypeError):
        draw_bounding_boxes(np.zeros((3, 4, 4)), boxes)


def test_draw_segmentation_masks():
    a = RNG.integers(0, 256, (3, 6, 7), dtype=np.uint8)
    masks = np.zeros((2, 6, 7), bool)
    masks[0, :3] = True
    masks[1, 2:5, 1:4] = True
    out = draw_segmentation_masks(fg.from_numpy(a), fg.from_numpy(masks), alpha=0.6,
                                  colors=[(255, 0, 0), (0, 0, 255)]).numpy()
    colored = a.astype(np.float32).copy()
    colored[:, masks[0]] = np.array([255, 0, 0], np.float32)[:, None]
    colored[:, masks[1]] = np.array([0, 0, 255], np.float32)[:, None]
    ref = (torch.tensor(a) * 0.4 + torch.tensor(colored) * 0.6).to(torch.uint8).numpy()
    np.testing.assert_array_equal(out, ref)
    with pytest.raises(ValueError, match="bool"):
        draw_segmentation_masks(fg.from_numpy(a), fg.zeros(6, 7))
    with pytest.raises(ValueError, match="same height and width"):
        draw_segmentation_masks(fg.from_numpy(a), fg.zeros(5, 7, dtype=fg.bool))


def test_io_png_jpeg_roundtrip(tmp_path):
    a = RNG.integers(0, 256, (3, 9, 11), dtype=np.uint8)
    t = fg.from_numpy(a)
    vio.write_png(t, str(tmp_path / "x.png"))
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "x.png")), a.transpose(1, 2, 0))
    back = vio.read_image(str(tmp_path / "x.png"))
    assert back.dtype == fg.uint8
    np.testing.assert_array_equal(back.numpy(), a)
    gray = vio.read_image(str(tmp_path / "x.png"), vio.ImageReadMode.GRAY)
    np.testing.assert_array_equal(gray.numpy()[0], np.asarray(Image.open(tmp_path / "x.png").convert("L")))
    rgba = vio.decode_image(vio.read_file(str(tmp_path / "x.png")), mode=vio.ImageReadMode.RGB_ALPHA)
    assert tuple(rgba.shape) == (4, 9, 11) and (rgba.numpy()[3] == 255).all()
    enc = vio.encode_png(t, compression_level=9)
    assert enc.dtype == fg.uint8 and enc.ndim == 1 and bytes(enc.numpy()[:8]) == b"\x89PNG\r\n\x1a\n"
    np.testing.assert_array_equal(vio.decode_png(enc).numpy(), a)
    vio.write_jpeg(t, str(tmp_path / "x.jpg"), quality=90)
    j = vio.read_image(str(tmp_path / "x.jpg"))
    np.testing.assert_array_equal(j.numpy(), np.asarray(Image.open(tmp_path / "x.jpg")).transpose(2, 0, 1))
    with pytest.raises(RuntimeError, match="uint8"):
        vio.encode_png(fg.zeros(3, 4, 4))
    with pytest.raises(ValueError):
        vio.encode_jpeg(t, quality=0)
    with pytest.raises(RuntimeError):
        vio.decode_image(fg.tensor([1, 2, 3], dtype=fg.uint8))
