"""Write the ONNX backend node tests out as files and run ``tlcheck compare`` on them.

``export`` writes every case of ``onnx.backend.test.loader.load_model_tests(kind="node")``
as ``<out>/<name>/model.onnx`` plus ``test_data_set_N/{input,output}_M.pb``;
``run`` runs ``tlcheck compare`` on each written case and classifies the result.
"""
