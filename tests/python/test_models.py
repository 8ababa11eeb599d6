"""Real models through the Python API."""

import numpy as np

import switchyard as ort
from conftest import REPO_ROOT

DIGITS = REPO_ROOT / "examples" / "digits"


def test_digits_accuracy():
    sess = ort.InferenceSession(str(DIGITS / "digits_cnn.onnx"), providers=["CPUExecutionProvider"])
    images = np.load(DIGITS / "test_images.npy")
    labels = np.load(DIGITS / "test_labels.npy")
    (image_input,) = sess.get_inputs()
    assert (image_input.name, image_input.type, image_input.shape) == ("image", "tensor(float)", ["batch", 1, 8, 8])
    (logits,) = sess.run(["logits"], {"image": images})
    assert logits.shape == (len(labels), 10)
    accuracy = float(np.mean(np.argmax(logits, axis=1) == labels))
    assert accuracy >= 0.9, accuracy
    # One image at a time gives the same answers as the batch.
    for i in range(0, len(labels), 37):
        (one,) = sess.run(None, {"image": images[i:i + 1]})
        np.testing.assert_allclose(one[0], logits[i], rtol=1e-4, atol=1e-4)
