"""``SummaryWriter``: scalars, histograms, text and images, written as TensorBoard events with
the ``tensorboard`` package's event-file writer and protocol buffers.

Written as PyTorch writes them (same tags, same summary kinds, the same default histogram
buckets and log directory names), so TensorBoard shows ember's runs as it shows PyTorch's.
The methods ember does not provide (graphs, embeddings, audio, video, figures, meshes, PR
curves, hparams) raise NotImplementedError.
"""
from __future__ import annotations

import io
import os
import time

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["FileWriter", "SummaryWriter"]


def _numpy(value):
    """A NumPy array of a tensor, array or number."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class FileWriter:
    """One event file in ``log_dir``: summaries and events, with a step and a wall time."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


def _default_bins():
    """TensorFlow's histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def _histogram(values, bins, max_bins):
    """A HistogramProto: TensorBoard keeps each bucket's right edge, so the support is cut to
    the non-empty buckets with one empty bucket to their left."""
    values = values.reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, (-len(counts)) % group)).reshape(-1, group).sum(axis=1)
        limits = np.append(limits[:-1:group], limits[-1])
    nonzero = np.flatnonzero(counts)
    start, end = int(nonzero[0]), int(nonzero[-1]) + 1
    counts = np.concatenate([[0], counts[:end]]) if start == 0 else counts[start - 1:end]
    limits = limits[start:end + 1]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


def _image_hwc(image, dataformats):
    """An image as a height x width x channels uint8 array (floats are taken as 0..1)."""
    image = _numpy(image)
    dataformats = dataformats.upper()
    if sorted(dataformats) != sorted(set(dataformats)) or len(dataformats) != image.ndim:
        raise ValueError(f"size of input tensor and input format are different. tensor shape: "
                         f"{image.shape}, input_format: {dataformats}")
    if dataformats == "HW":
        image = image[None]
        dataformats = "CHW"
    image = np.transpose(image, [dataformats.index(c) for c in "HWC"])
    if image.shape[2] == 1:
        image = np.concatenate([image] * 3, axis=2)
    scale = 1 if image.dtype == np.uint8 else 255
    return np.clip(image.astype(np.float32) * scale, 0, 255).astype(np.uint8)


class SummaryWriter:
    """Write TensorBoard summaries to ``log_dir`` (default ``runs/<time>_<host><comment>``)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The writer for ``log_dir`` (made again after ``close``)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number under ``tag`` at ``global_step``."""
        value = _numpy(scalar_value)
        if value.squeeze().ndim != 0:
            raise AssertionError("scalar should be 0D")
        value = float(value)
        if new_style:
            tensor = TensorProto(dtype="DT_DOUBLE" if double_precision else "DT_FLOAT",
                                 tensor_shape=TensorShapeProto())
            (tensor.double_val if double_precision else tensor.float_val).append(value)
            metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
                plugin_name="scalars"))
            summary = Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])
        else:
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: each goes to its own run directory
        ``log_dir/<main_tag>_<tag>``, under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(logdir, main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = FileWriter(path, self.max_queue, self.flush_secs,
                                    self.filename_suffix)
                self.all_writers[path] = writer
            summary = Summary(value=[Summary.Value(tag=main_tag,
                                                   simple_value=float(_numpy(value)))])
            writer.add_summary(summary, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log the distribution of ``values`` (TensorFlow's buckets by default)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        proto = _histogram(_numpy(values).astype(float), bins, max_bins)
        self._get_file_writer().add_summary(
            Summary(value=[Summary.Value(tag=tag, histo=proto)]), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a (Markdown) string, under ``<tag>/text_summary``."""
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        summary = Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                               tensor=tensor)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image (floats in 0..1 or uint8), PNG-encoded with Pillow."""
        from PIL import Image
        pixels = _image_hwc(img_tensor, dataformats)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG")
        image = Summary.Image(height=pixels.shape[0], width=pixels.shape[1],
                              colorspace=pixels.shape[2],
                              encoded_image_string=buffer.getvalue())
        self._get_file_writer().add_summary(
            Summary(value=[Summary.Value(tag=tag, image=image)]), global_step, walltime)

    def _unsupported(self, name):
        raise NotImplementedError(f"SummaryWriter.{name} is not supported by ember (it logs "
                                  "scalars, histograms, text and images)")

    def add_graph(self, *args, **kwargs):
        self._unsupported("add_graph")

    def add_images(self, *args, **kwargs):
        self._unsupported("add_images")

    def add_figure(self, *args, **kwargs):
        self._unsupported("add_figure")

    def add_embedding(self, *args, **kwargs):
        self._unsupported("add_embedding")

    def add_audio(self, *args, **kwargs):
        self._unsupported("add_audio")

    def add_video(self, *args, **kwargs):
        self._unsupported("add_video")

    def add_pr_curve(self, *args, **kwargs):
        self._unsupported("add_pr_curve")

    def add_mesh(self, *args, **kwargs):
        self._unsupported("add_mesh")

    def add_hparams(self, *args, **kwargs):
        self._unsupported("add_hparams")

    def flush(self):
        """Write everything queued to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
