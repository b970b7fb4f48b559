"""py_moving_avg.py's moving average into a NumPy array: `python py_moving_avg_np.py VARIANT`
(`pycoro`: `.to_numpy()` of the generator; `numba`: `np.fromiter` over it)."""
from py_moving_avg import main

if __name__ == "__main__":
    main(into_numpy=True)
